package io.github.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockAcquisitionException.Reason;
import io.github.distlock.LockLoss;
import io.github.distlock.LockLossListener;
import io.github.distlock.LockLostException;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockKeys;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock semantics of every registry, written once over a {@link LockStore}: per-thread holds
 * and reentrancy across the lock objects of a key, the unfair local gate, retrying an acquisition
 * until its {@link Wait} is over (or, untimed, until the store has failed for one request
 * timeout), reporting lost holds, statistics and DEBUG traces. The store only decides which entry
 * owns a key.
 *
 * <p>For registry implementations: a registry builds its store with this core as the store's
 * {@link HoldLossListener}, and hands out the locks of {@link #obtain}.
 */
public final class LockCore implements HoldLossListener {

    private static final Logger logger = LoggerFactory.getLogger(LockCore.class);

    /** A try-once gets at least this long for its round trips (a cold client must connect first). */
    private static final long MIN_ATTEMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Pause between attempts after a store call failed. */
    private static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** How often a thread waiting at the unfair gate looks whether the registry was closed. */
    private static final long GATE_CLOSE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final LockStore store;

    private final LockCounters statistics;

    private final String ownerIdentity;

    private final LocalHandoffs handoffs;

    private final List<LockLossListener> lossListeners = new CopyOnWriteArrayList<>();

    /**
     * Tells the loss listeners, one report after another in the order they came: never on the
     * thread that learnt of the loss, which may hold a key's unfair gate (a listener locking that
     * key would re-enter it) or be a store's I/O thread (a listener calling the store would stall it).
     */
    private final ExecutorService lossReports;

    /*
     * Invariant: a key is mapped while its users count is positive; users counts the threads that
     * hold the key or are acquiring it (a reentrant hold counts once) and changes only inside
     * compute calls, so every thread that uses a key uses the state mapped at that moment.
     */
    private final Map<String, KeyState> keyStates = new ConcurrentHashMap<>();

    /**
     * @param store where the locks are kept
     * @param statistics the registry's counters, shared with the store as its {@link io.github.distlock.store.StoreEvents}
     * @param ownerIdentity how this process names itself as a holder, for messages
     * @param localHandoff when unfair entries are kept between the holds of this process's threads
     */
    public LockCore(LockStore store, LockCounters statistics, String ownerIdentity,
            LocalHandoff localHandoff) {
        this.store = store;
        this.statistics = statistics;
        this.ownerIdentity = ownerIdentity;
        this.handoffs = new LocalHandoffs(store, localHandoff, this::releaseState, this::passesLost);
        ThreadPoolExecutor lossReports = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                DaemonThreads.named("distlock-loss-listeners-" + store.namespace()));
        lossReports.allowCoreThreadTimeOut(true);
        this.lossReports = lossReports;
    }

    /**
     * Returns a lock object for {@code key}: cheap, without a store call.
     * @param key a non-empty key
     * @param fair whether the lock object waits in arrival order
     * @return the lock
     * @throws IllegalArgumentException if the key is null, empty or over the store's size limit
     * @throws IllegalStateException if the store was closed
     */
    public FencedLock obtain(@Nullable String key, boolean fair) {
        String checked = checkKey(key);
        this.store.checkOpen();
        return new CoreFencedLock(this, checked, fair);
    }

    /**
     * The one check of lock keys: any non-empty string the store can carry is a key. It comes
     * before any store call: a key the store cannot carry would fail its calls, or on a shared
     * connection break other holds.
     * @param key a candidate key
     * @return the key
     * @throws IllegalArgumentException if it is null or empty, or takes more room in the store than
     * the store's {@linkplain LockStore#maxKeySize() limit}
     */
    private String checkKey(@Nullable String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("Lock key must not be " + ((key == null) ? "null" : "empty"));
        }
        long size = this.store.keySize(key);
        long limit = this.store.maxKeySize();
        if (size > limit) {
            throw new IllegalArgumentException("Lock key '" + LockKeys.abbreviate(key) + "' is too long for "
                    + this.store.describe() + ": it takes " + size + " bytes there (escaped, namespace included), over "
                    + "the limit of " + limit + " bytes");
        }
        return key;
    }

    // ---- acquisition ---------------------------------------------------------------------------

    boolean acquire(CoreFencedLock lock, Wait wait) throws InterruptedException {
        String key = lock.getKey();
        if (wait.isInterruptible() && Thread.interrupted()) {
            throw new InterruptedException("Interrupted before acquiring lock '" + key + "'");
        }
        this.store.checkOpen();
        long start = System.nanoTime();
        Thread current = Thread.currentThread();
        KeyState state = retain(key);
        boolean acquired = false;
        try {
            KeyState.Hold existing = state.holdOf(current);
            if (existing != null) {
                String lost = existing.entry.lostReason();
                if (lost != null) {
                    throw new LockLostException(key, existing.fence,
                            lost + "; unlock the lost hold before acquiring the lock again");
                }
                // The first hold keeps the key state referenced; this one must not add a reference.
                existing.count++;
                return true;
            }
            // Unfair acquirers of one process queue here first: one store entry per key and process.
            boolean passedGate = !lock.isFair() && passGate(state, wait, start);
            if (!lock.isFair() && !passedGate) {
                this.statistics.timedOut();
                lock.missed(localHolderOrAhead(state, current));
                return false;
            }
            // A fair acquisition's first store attempt starts when it starts waiting for the give-back.
            long firstAttemptStart = System.nanoTime();
            if (lock.isFair()) {
                awaitGiveBacks(state, attempt(wait, 0, firstAttemptStart));
            }
            try {
                KeyState.Hold passed = passedGate ? this.handoffs.take(state) : null;
                if (passed != null) {
                    state.holds.put(current, passed);
                    acquired = true;
                    this.statistics.localHandoff();
                    return true;
                }
                StoreEntry entry = acquireFromStore(state, wait, lock, start, passedGate, firstAttemptStart);
                if (entry != null) {
                    KeyState.Hold hold = newHold(state, entry, passedGate);
                    state.holds.put(current, hold);
                    acquired = true;
                    this.statistics.acquired();
                    if (logger.isDebugEnabled()) {
                        logger.debug("Acquired lock '{}' with fence {} after {} ms{}", LockKeys.abbreviate(key), hold.fence,
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                                (entry.ahead() != null) ? ", handed over by " + entry.ahead() : "");
                    }
                }
                else {
                    this.statistics.timedOut();
                }
                return acquired;
            }
            finally {
                if (!acquired && passedGate) {
                    state.unfairGate.unlock();
                }
            }
        }
        finally {
            if (!acquired) {
                releaseState(state);
            }
        }
    }

    /**
     * Passes the key's unfair gate within {@code wait}, in slices: behind a thread of this process
     * that holds the key (or lost its hold and has not unlocked yet) a waiter stays at the gate, and
     * a registry closed meanwhile must end it as it ends the waiters queued in the store.
     * @return whether the gate was passed; {@code false} once the wait is over
     * @throws LockAcquisitionException if the registry was closed while waiting
     */
    private boolean passGate(KeyState state, Wait wait, long start) throws InterruptedException {
        while (!wait.atMost(GATE_CLOSE_CHECK_NANOS).lock(state.unfairGate)) {
            if (wait.isOver()) {
                return false;
            }
            if (this.store.isClosed()) {
                this.statistics.failed();
                throw new LockAcquisitionException(Reason.REGISTRY_CLOSED, state.key,
                        Duration.ofNanos(System.nanoTime() - start), localHolderOrAhead(state, Thread.currentThread()),
                        "the lock registry was closed", null);
            }
        }
        return true;
    }

    /**
     * Has the process's lingering entry of the key given back to the store, and waits for that
     * within {@code firstAttempt}, the bound of the acquisition's first store attempt (see
     * {@link #attempt}), so that waiting here and then writing take no longer than one attempt. An
     * unfair thread of the process may take the entry meanwhile and let it linger again: asked
     * again then. Past the bound, the fair entry queues behind the entry, which goes once the
     * give-back is done.
     */
    private void awaitGiveBacks(KeyState state, Wait firstAttempt) throws InterruptedException {
        while (!firstAttempt.isOver()) {
            CompletableFuture<Void> givenBack = this.handoffs.giveBackLingering(state);
            if (givenBack == null) {
                return;
            }
            firstAttempt.block(remaining -> {
                try {
                    givenBack.get(remaining, TimeUnit.NANOSECONDS);
                }
                catch (ExecutionException | TimeoutException ex) {
                    // Queues behind it.
                }
                return null;
            });
        }
    }

    /** The first hold of an entry that owns its key; the entry is released if that fails (a store defect). */
    private KeyState.Hold newHold(KeyState state, StoreEntry entry, boolean passedGate) {
        try {
            KeyState.Tenure tenure = passedGate ? this.handoffs.started(state, entry) : null;
            return new KeyState.Hold(entry, tenure, 0);
        }
        catch (RuntimeException | Error ex) {
            try {
                entry.release();
            }
            catch (StoreUnavailableException | RuntimeException releaseFailure) {
                ex.addSuppressed(releaseFailure);
            }
            throw ex;
        }
    }

    /**
     * Queues in the store until owning the key. Retries with a new entry when the entry or its
     * session is lost while waiting, and after store failures while time is left. The first
     * attempt's bound counts from {@code firstAttemptStart}, which a fair acquisition's wait for a
     * give-back has used part of.
     * @return the owning entry, or {@code null} if the wait is over
     */
    private @Nullable StoreEntry acquireFromStore(KeyState state, Wait wait, CoreFencedLock lock, long start,
            boolean passedGate, long firstAttemptStart) throws InterruptedException {
        // Behind a gate holder that gave up on the failing store, this thread waited through that failure
        // too; failing since before it came counts from when it came: its own wait is what is bounded.
        long failingBefore = passedGate ? state.storeFailingSince : 0;
        long failingSince = (failingBefore == 0) ? 0 : (failingBefore - start > 0) ? failingBefore : start;
        // The latest failure in which the store said why (a missing table, refused credentials):
        // a last attempt cut short by the deadline often says only that no answer came in time.
        StoreUnavailableException lastReason = null;
        boolean first = true;
        while (true) {
            this.store.checkOpen();
            long attemptStart = first ? firstAttemptStart : System.nanoTime();
            first = false;
            Wait attempt = attempt(wait, failingSince, attemptStart);
            StoreEntry entry = null;
            try {
                entry = this.store.newEntry(state.key, attempt);
                boolean owned = acquireTracked(state, entry, wait, attempt);
                state.storeFailingSince = 0;
                if (owned) {
                    return entry;
                }
                lock.missed(entry.ahead());
                return null;
            }
            catch (EntryLostException ex) {
                if (this.store.isClosed()) {
                    throw failure(Reason.REGISTRY_CLOSED, state.key, start, entry, "the lock registry was closed", null);
                }
                logger.debug("Entry for lock '{}' lost while waiting ({}); queueing again", LockKeys.abbreviate(state.key),
                        ex.getMessage());
                if (!ex.isSessionLost()) {
                    // The store answered (the entry was deleted): a later failure starts a new request timeout.
                    failingSince = 0;
                    lastReason = null;
                    state.storeFailingSince = 0;
                }
                else {
                    // A lost session is the store failing, even when a new session starts each time (a
                    // session can die right after a slow start): untimed waits still give up after the request timeout.
                    long now = System.nanoTime();
                    // An attempt that outlived its bound (at most a request timeout) had its write answered:
                    // the failure starts now, whatever was inherited or seen before.
                    boolean answeredMeanwhile = now - attemptStart >= this.store.requestTimeoutNanos();
                    failingSince = (failingSince == 0 || answeredMeanwhile) ? now : failingSince;
                    if (givenUp(wait, failingSince)) {
                        gaveUpOnStore(state, passedGate, failingSince);
                        throw failure(Reason.STORE_UNAVAILABLE, state.key, start, entry,
                                this.store.describe() + " keeps losing the session: "
                                + ex.getMessage(), ex);
                    }
                }
            }
            catch (StoreUnavailableException ex) {
                failingSince = (failingSince == 0) ? attemptStart : failingSince;
                if (givesReason(ex)) {
                    lastReason = ex;
                }
                if (!givenUp(wait, failingSince)) {
                    wait.pause(RETRY_PAUSE_NANOS);
                }
                // A wait that ends while the store fails ends because of that failure, not a busy lock.
                if (givenUp(wait, failingSince)) {
                    gaveUpOnStore(state, passedGate, failingSince);
                    String message = this.store.describe() + " is unavailable: " + ex.getMessage();
                    if (lastReason != null && lastReason != ex) {
                        ex.addSuppressed(lastReason);
                        message += " (an earlier attempt: " + lastReason.getMessage() + ")";
                    }
                    throw failure(Reason.STORE_UNAVAILABLE, state.key, start, entry, message, ex);
                }
            }
            if (wait.isOver()) {
                lock.missed((entry != null) ? entry.ahead() : null);
                return null;
            }
        }
    }

    /** The gate holder gives up because the store has failed since {@code since}: the next one inherits that. */
    private static void gaveUpOnStore(KeyState state, boolean passedGate, long since) {
        if (passedGate) {
            state.storeFailingSince = since;
        }
    }

    /** While the entry waits, it counts among the key's waiters. */
    private static boolean acquireTracked(KeyState state, StoreEntry entry, Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        state.pending.add(entry);
        try {
            return entry.acquire(wait, attempt);
        }
        finally {
            state.pending.remove(entry);
        }
    }

    /**
     * The bound of one attempt's store calls. A timed one gets at least {@link #MIN_ATTEMPT_NANOS}
     * (so a zero timeout still tries once); an untimed one gives up once the store has failed for
     * one request timeout, counted from the start of the first failed attempt, so later attempts
     * get only what is left of it.
     */
    private Wait attempt(Wait wait, long failingSince, long now) {
        long requestTimeout = this.store.requestTimeoutNanos();
        long nanos = wait.isTimed() ? Math.min(requestTimeout, Math.max(wait.deadlineNanos() - now, MIN_ATTEMPT_NANOS))
                : (failingSince == 0) ? requestTimeout : Math.max(0, requestTimeout - (now - failingSince));
        return Wait.until(now + nanos, wait.isInterruptible());
    }

    /** @return whether the failure carries the store's or the client's reason, not just a timeout */
    private static boolean givesReason(StoreUnavailableException failure) {
        Throwable cause = failure.getCause();
        return cause != null && !(cause instanceof TimeoutException);
    }

    /** Timed waits give up at their deadline, untimed ones after failing for one request timeout. */
    private boolean givenUp(Wait wait, long failingSince) {
        return wait.isTimed() ? wait.isOver() : System.nanoTime() - failingSince >= this.store.requestTimeoutNanos();
    }

    private LockAcquisitionException failure(Reason reason, String key, long start, @Nullable StoreEntry entry,
            String message, @Nullable Throwable cause) {
        this.statistics.failed();
        String holder = (entry != null) ? entry.ahead() : null;
        return new LockAcquisitionException(reason, key, Duration.ofNanos(System.nanoTime() - start), holder, message,
                cause);
    }

    /**
     * Who a thread that timed out at the unfair gate was behind, from local state only: another
     * thread of this process holding the key, or what that thread's entry waits for in the store.
     */
    private @Nullable String localHolderOrAhead(KeyState state, Thread current) {
        Thread holder = state.liveHolderOtherThan(current);
        if (holder != null) {
            return LockSnapshot.Entry.describe(this.ownerIdentity, holder.getName());
        }
        for (StoreEntry entry : state.pending) {
            if (entry.isWaiting()) {
                return entry.ahead();
            }
        }
        return null;
    }

    // ---- release and queries -------------------------------------------------------------------

    void release(String key) {
        Thread current = Thread.currentThread();
        KeyState state = this.keyStates.get(key);
        KeyState.Hold hold = (state != null) ? state.holdOf(current) : null;
        if (state == null || hold == null) {
            throw notHeld(key);
        }
        StoreEntry entry = hold.entry;
        // Looked at while the hold is still the key's: a loss this look is the first to notice (a
        // session's deadline) is then reported with the hold's own fence, local pass included.
        String lostBefore = entry.lostReason();
        if (--hold.count > 0) {
            if (lostBefore != null) {
                throw new LockLostException(key, hold.fence, lostBefore);
            }
            return;
        }
        state.holds.remove(current);
        boolean kept = false;
        String lost = null;
        try {
            // Not kept if lost, which keep looks at last. Kept: no store call, the next unfair holder of
            // this process takes the entry, or the timer releases it.
            kept = hold.tenure != null && this.handoffs.keep(state, hold.tenure);
            if (!kept) {
                lost = releaseToStore(entry, hold.fence);
                if (lost != null && hold.tenure != null) {
                    this.handoffs.endedLost(hold.tenure);
                    // Still under the gate: the holds passed on before this one may have been lost too.
                    this.handoffs.reportLostPasses(entry, hold.tenure.keptPasses, Fences.pass(hold.fence) - 1, null);
                }
            }
        }
        catch (StoreUnavailableException ex) {
            logger.warn("Release of lock '{}' (fence {}) not confirmed by {} ({}); retrying in the background",
                    LockKeys.abbreviate(key), hold.fence, this.store.describe(), ex.getMessage());
            // The unlock returns: this hold, and those passed on before it since the store last confirmed
            // the entry, may have ended after the store lost it, and nothing later would say so.
            String reason = LocalHandoffs.unconfirmedRelease(this.store, String.valueOf(ex.getMessage()));
            int pass = Fences.pass(hold.fence);
            if (hold.tenure != null) {
                hold.tenure.keptPasses.unlocked(pass, System.nanoTime());
                this.handoffs.reportLostPasses(entry, hold.tenure.keptPasses, pass, reason);
            }
            else {
                passesLost(entry, pass, pass, reason);
            }
        }
        finally {
            if (hold.passedGate()) {
                state.unfairGate.unlock();
            }
            if (!kept) {
                releaseState(state);
            }
        }
        if (lost != null) {
            throw new LockLostException(key, hold.fence, lost);
        }
    }

    /** @return why the hold was lost, or {@code null} if the entry was released */
    private @Nullable String releaseToStore(StoreEntry entry, long fence) throws StoreUnavailableException {
        String lost = entry.lostReason();
        if (lost != null) {
            entry.discard();
            return lost;
        }
        if (!entry.release()) {
            return Objects.requireNonNullElse(entry.lostReason(),
                    "the lock entry was already gone from " + this.store.describe());
        }
        logger.debug("Released lock '{}' with fence {}", LockKeys.abbreviate(entry.lockKey()), fence);
        return null;
    }

    long fence(String key) {
        KeyState.Hold hold = currentHold(key);
        if (hold == null) {
            throw notHeld(key);
        }
        return hold.fence;
    }

    int holdCount(String key) {
        KeyState.Hold hold = currentHold(key);
        return (hold != null) ? hold.count : 0;
    }

    boolean isHeldByCurrentThread(String key) {
        KeyState.Hold hold = currentHold(key);
        return hold != null && hold.entry.lostReason() == null;
    }

    boolean isLocked(String key) {
        KeyState state = this.keyStates.get(key);
        if (state != null) {
            if (state.liveHolderOtherThan(null) != null) {
                return true;
            }
            KeyState.Tenure kept = state.kept;
            if (kept != null && kept.entry.lostReason() == null) {
                // This process owns the key in the store and none of its threads holds it.
                return false;
            }
        }
        return this.store.holder(key) != null;
    }

    @Nullable String holder(String key) {
        return this.store.holder(key);
    }

    /**
     * @param key the lock key
     * @param maxEntries at most this many entries are read
     * @return the key's holder and waiters, read from the store with lease times
     * @see io.github.distlock.InspectableLockRegistry#describeLock(String, int)
     */
    public LockSnapshot describeLock(@Nullable String key, int maxEntries) {
        return withLockFences(this.store.read(checkKey(key), checkMaxEntries(maxEntries), true));
    }

    /**
     * @param maxEntries at most this many entries are read
     * @return every lock of the namespace with a holder or a waiter
     * @see io.github.distlock.InspectableLockRegistry#describeLocks(int)
     */
    public NamespaceSnapshot describeLocks(int maxEntries) {
        NamespaceSnapshot read = this.store.readAll(checkMaxEntries(maxEntries));
        List<LockSnapshot> locks = new ArrayList<>(read.locks().size());
        for (LockSnapshot lock : read.locks()) {
            locks.add(withLockFences(lock));
        }
        return new NamespaceSnapshot(read.namespace(), read.revision(), locks, read.truncated());
    }

    /** Stores read their own fences; locks show them as {@link Fences} of the store acquisition. */
    private static LockSnapshot withLockFences(LockSnapshot read) {
        List<LockSnapshot.Entry> waiters = new ArrayList<>(read.waiters().size());
        for (LockSnapshot.Entry waiter : read.waiters()) {
            waiters.add(withLockFence(waiter));
        }
        LockSnapshot.Entry holder = read.holder();
        return new LockSnapshot(read.key(), (holder != null) ? withLockFence(holder) : null, waiters);
    }

    private static LockSnapshot.Entry withLockFence(LockSnapshot.Entry entry) {
        return new LockSnapshot.Entry(entry.owner(), entry.thread(), Fences.of(entry.fence(), 0), entry.queuedAt(),
                entry.leaseId(), entry.leaseTimeToLive());
    }

    private static int checkMaxEntries(int maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive, but was " + maxEntries);
        }
        return maxEntries;
    }

    private static IllegalMonitorStateException notHeld(String key) {
        return new IllegalMonitorStateException(
                "Lock '" + key + "' is not held by the current thread (" + Thread.currentThread().getName() + ")");
    }

    private KeyState.@Nullable Hold currentHold(String key) {
        KeyState state = this.keyStates.get(key);
        return (state != null) ? state.holdOf(Thread.currentThread()) : null;
    }

    // ---- loss, statistics, local state ---------------------------------------------------------

    /**
     * Reports a loss as a lost hold when a thread of the process had the entry, and otherwise as a
     * lost kept entry: no thread's critical section ended with it, but the store lost what the
     * process owned (an entry deleted behind its back, a failover, a restore, a lost session), which
     * an operator must see. A thread that holds the entry when the loss is reported is told at its
     * unlock; the threads that took it and unlocked before are told through {@link #passesLost}.
     */
    @Override
    public void holdLost(StoreEntry entry, String reason) {
        KeyState state = this.keyStates.get(entry.lockKey());
        int heldPass = this.handoffs.heldPass(state, entry);
        if (this.store.isClosed()) {
            return;
        }
        if (heldPass != LocalHandoffs.NOT_HELD) {
            // The pass read as the loss was classified: the hold may have left the key's state since.
            long fence = Fences.of(entry.fence(), heldPass);
            this.statistics.holdLost();
            logger.warn("Lock '{}' (fence {}) lost while held: {}", LockKeys.abbreviate(entry.lockKey()), fence, reason);
            tellLossListeners(new LockLoss(entry.lockKey(), fence, fence, 1, false, reason));
        }
        else {
            this.statistics.keptEntryLost();
            logger.warn("Lock '{}' (store fence {}) lost while this process kept it between holds: {}",
                    LockKeys.abbreviate(entry.lockKey()), entry.fence(), reason);
        }
    }

    /**
     * Holds already unlocked that the store may have stopped backing before their unlock: passed on
     * between threads of the process with no store call, on an entry it lost later and last showed
     * present before they ended; or ended by a release it did not confirm. No unlock told their
     * threads, so they count as lost holds and go to the listeners.
     */
    private void passesLost(StoreEntry entry, int first, int last, String reason) {
        if (this.store.isClosed()) {
            return;
        }
        int holds = last - first + 1;
        this.statistics.holdsLost(holds);
        long firstFence = Fences.of(entry.fence(), first);
        long lastFence = Fences.of(entry.fence(), last);
        logger.warn("Lock '{}': {} hold(s) unlocked (fences {} to {}) may have overlapped another holder: {}",
                LockKeys.abbreviate(entry.lockKey()), holds, firstFence, lastFence, reason);
        tellLossListeners(new LockLoss(entry.lockKey(), firstFence, lastFence, holds, true, reason));
    }

    private void tellLossListeners(LockLoss loss) {
        if (this.lossListeners.isEmpty()) {
            return;
        }
        this.lossReports.execute(() -> {
            for (LockLossListener listener : this.lossListeners) {
                try {
                    listener.lockLost(loss);
                }
                catch (RuntimeException ex) {
                    logger.warn("Lock loss listener {} failed on the loss of lock '{}'", listener,
                            LockKeys.abbreviate(loss.key()), ex);
                }
            }
        });
    }

    /**
     * @param listener told of every loss from now on
     * @see io.github.distlock.InspectableLockRegistry#addLossListener
     */
    public void addLossListener(LockLossListener listener) {
        this.lossListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * @param listener a listener added before
     * @return whether it was registered
     */
    public boolean removeLossListener(LockLossListener listener) {
        return this.lossListeners.remove(listener);
    }

    /** @return threads of this process that hold a key and have not lost it (a reentrant hold counts once) */
    public int heldLockCount() {
        int held = 0;
        for (KeyState state : this.keyStates.values()) {
            for (KeyState.Hold hold : state.holds.values()) {
                if (hold.entry.lostReason() == null) {
                    held++;
                }
            }
        }
        return held;
    }

    /** @return threads of this process waiting for a key: at the unfair gate, or behind an older entry */
    public int waitingThreadCount() {
        int waiting = 0;
        for (KeyState state : this.keyStates.values()) {
            waiting += waitersOf(state);
        }
        return waiting;
    }

    /**
     * @param key the lock key
     * @return threads of this process waiting for {@code key}: at the unfair gate, or behind an
     * older entry in the store
     */
    public int waitingThreadCount(String key) {
        KeyState state = this.keyStates.get(key);
        return (state != null) ? waitersOf(state) : 0;
    }

    private static int waitersOf(KeyState state) {
        int waiting = state.unfairGate.getQueueLength();
        for (StoreEntry entry : state.pending) {
            if (entry.isWaiting()) {
                waiting++;
            }
        }
        return waiting;
    }

    /** @return the keys this process holds or is acquiring right now */
    public Set<String> activeKeys() {
        return this.keyStates.keySet();
    }

    private KeyState retain(String key) {
        return this.keyStates.compute(key, (k, state) -> {
            KeyState retained = (state != null) ? state : new KeyState(k);
            retained.users++;
            return retained;
        });
    }

    private void releaseState(KeyState state) {
        this.keyStates.computeIfPresent(state.key, (k, current) -> (--current.users == 0) ? null : current);
    }
}
