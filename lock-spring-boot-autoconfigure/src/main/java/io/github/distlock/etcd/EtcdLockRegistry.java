package io.github.distlock.etcd;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LockRegistry} whose locks are shared by every process that uses the same etcd cluster
 * and namespace.
 *
 * <p><b>How it works.</b> Each lock key has a queue in etcd: an acquisition writes an entry under
 * the key's root, attached to the registry's session lease, and owns the lock when its entry is
 * the oldest (lowest create revision). A waiter waits for the deletion of the entry just before
 * its own, delivered by one watch stream per registry. The fence of a hold is its entry's create
 * revision. An uncontended {@code lock()} plus {@code unlock()} costs two etcd round trips.
 *
 * <p><b>Fair and unfair.</b> Fair acquisitions take their place in the etcd queue the moment they
 * start waiting, so fair waiters are served in arrival order across all threads of all processes.
 * Unfair acquisitions of one process first pass a local, barging gate, so at most one of them per
 * key and process waits in etcd; they make no ordering promise. Fair and unfair acquisitions of a
 * key share one queue and exclude each other.
 *
 * <p><b>Session.</b> One lease per registry, granted at the first acquisition and renewed every
 * third of its TTL. If etcd does not acknowledge a renewal within one TTL (measured on this
 * process's monotonic clock from when the acknowledged renewal was sent), every hold under the
 * lease is considered lost: {@link FencedLock#isLockedByCurrentThread()} turns false and
 * {@link FencedLock#unlock()} throws {@link LockLostException}. Later acquisitions start a new
 * session. A crashed process's locks are freed when its lease expires, after at most one TTL.
 *
 * <p><b>Failures.</b> Every etcd request is bounded by the request timeout. A timed acquisition
 * retries transient etcd failures until its timeout and then throws
 * {@link LockAcquisitionException}; an untimed one ({@code lock()}) throws once etcd has failed
 * for longer than the request timeout. A zero or negative timeout makes one attempt, which may
 * take up to {@code min(request timeout, 1 s)} when etcd is slow; so may a timed attempt whose
 * timeout is shorter than that. Entries of waiters that give
 * up are deleted in the background, retried until etcd confirms.
 *
 * <p>{@link #close()} revokes the lease, which releases every lock held through this registry;
 * holds still open then report themselves lost. The {@link Client} is not closed.
 */
public final class EtcdLockRegistry implements LockRegistry, AutoCloseable {

    /** Default namespace under which all lock entries live. */
    public static final String DEFAULT_NAMESPACE = "/distributed-lock/";

    /** Default session lease TTL. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

    /** Default bound on each etcd request. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private static final Logger logger = LoggerFactory.getLogger(EtcdLockRegistry.class);

    /** A try-once gets at least this long for its round trips (a cold client must connect first). */
    private static final long MIN_ATTEMPT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Client client;

    private final EtcdKeyspace keyspace;

    private final long leaseTtlSeconds;

    private final String ownerIdentity;

    private final String endpoints;

    private final long requestTimeoutNanos;

    /** Keep-alives and expiry checks only: see {@link EtcdSession}. */
    private final ScheduledExecutorService sessionScheduler;

    /** Background deletes, ghost sweeps and watch probes, which call into jetcd and may wait on it. */
    private final ScheduledExecutorService maintenance;

    private final WatchDispatcher dispatcher;

    private final EntryDeleter deleter;

    private final LockQueue queue;

    private final Map<String, LocalKeyState> keyStates = new ConcurrentHashMap<>();

    private final SessionKeeper sessions;

    private final EtcdLockStatistics statistics = new EtcdLockStatistics();

    private final BackendFailures failures;

    private final LockInspector inspector;

    private volatile boolean closed;

    /**
     * Creates a registry with the default request timeout.
     * @param client the etcd client (not closed by this registry)
     * @param namespace prefix of every key this registry writes
     * @param leaseTtl session lease TTL, whole seconds, at least one second
     * @param ownerIdentity who this process is, stored with every entry (for example
     * {@code orders@host-1:4242})
     */
    public EtcdLockRegistry(Client client, String namespace, Duration leaseTtl, String ownerIdentity) {
        this(builder(client).namespace(namespace).leaseTtl(leaseTtl).ownerIdentity(ownerIdentity));
    }

    private EtcdLockRegistry(Builder builder) {
        this.client = builder.client;
        this.keyspace = new EtcdKeyspace(builder.namespace);
        this.leaseTtlSeconds = builder.leaseTtl.getSeconds();
        this.ownerIdentity = builder.ownerIdentity;
        this.endpoints = builder.endpoints;
        this.requestTimeoutNanos = builder.requestTimeout.toNanos();
        this.sessionScheduler = singleThread("distlock-etcd-session");
        this.maintenance = singleThread("distlock-etcd-maintenance");
        this.dispatcher = new WatchDispatcher(this.client.getWatchClient(), this.keyspace, this.maintenance,
                this.requestTimeoutNanos);
        this.failures = new BackendFailures(this.statistics, ChannelReconnect.of(this.client));
        this.deleter = new EntryDeleter(this.maintenance, this.requestTimeoutNanos, this.failures);
        this.inspector = new LockInspector(this.client, this.keyspace, this.requestTimeoutNanos, this.endpoints);
        RaftTerms terms = new RaftTerms();
        this.sessions = new SessionKeeper(this.client, this.keyspace, this.leaseTtlSeconds, this.requestTimeoutNanos,
                this.sessionScheduler, this.maintenance, terms, this.statistics, this.failures);
        this.queue = new LockQueue(this.client.getKVClient(), this.dispatcher, this.deleter, this.requestTimeoutNanos,
                TimeUnit.SECONDS.toNanos(this.leaseTtlSeconds), terms, this::onHoldLost,
                this.sessions::sweepForGhosts, this.maintenance, this.failures);
    }

    private static ScheduledExecutorService singleThread(String name) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = Executors.defaultThreadFactory().newThread(runnable);
            thread.setName(name);
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /**
     * Starts building a registry on {@code client}.
     * @param client the etcd client (not closed by the registry)
     * @return a builder with the defaults
     */
    public static Builder builder(Client client) {
        return new Builder(client);
    }

    @Override
    public FencedLock obtain(String key) {
        return obtain(key, false);
    }

    @Override
    public FencedLock obtain(String key, boolean fair) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("Lock key must not be " + ((key == null) ? "null" : "empty"));
        }
        assertOpen();
        return new EtcdFencedLock(this, key, fair);
    }

    /**
     * Grants the session lease and opens the watch stream in the background, so that the first
     * acquisition does not pay for connecting: a cold client may need longer than the one
     * attempt a {@code tryLock()} or a zero wait timeout gets. Optional; acquisitions connect on
     * demand, and a failure here only means the first acquisition will try again.
     * @return completes once connected, or exceptionally with the etcd failure
     */
    public CompletableFuture<Void> connect() {
        return CompletableFuture.runAsync(() -> {
            try {
                assertOpen();
                this.sessions.current(this.requestTimeoutNanos, false);
                EtcdCalls.await(this.dispatcher.ensureOpen(), this.requestTimeoutNanos, false, "watch creation");
            }
            catch (EtcdCallFailedException ex) {
                this.failures.record();
                throw new IllegalStateException("Could not connect to etcd at " + this.endpoints + ": "
                        + ex.getMessage(), ex);
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
    }

    /**
     * Whether the registry holds a live session: a lease whose latest renewal etcd acknowledged
     * within the TTL. False before the first acquisition (or {@link #connect()}) and after a loss
     * until the next acquisition starts a new session. For health checks.
     * @return whether the session lease is alive
     */
    public boolean isSessionAlive() {
        EtcdSession current = this.sessions.currentOrNull();
        return current != null && current.isAlive();
    }

    /**
     * How long ago the latest renewal of the session lease that etcd acknowledged was sent: stays
     * below a third of the TTL while etcd is healthy, and reaching the TTL means the session is lost.
     * @return the age of the latest acknowledged renewal, or {@code null} if no session was started
     */
    public Duration getSessionRenewalAge() {
        EtcdSession current = this.sessions.currentOrNull();
        return (current != null) ? current.sinceLastRenewal() : null;
    }

    /**
     * Reads from etcd who holds {@code key} and who waits for it, in every process that shares the
     * namespace. For operators and tools: one prefix read and one lease read per process involved.
     * @param key the lock key
     * @param maxEntries at most this many queue entries are read
     * @return the lock's holder and waiters; a free lock has no holder and no waiters
     * @throws IllegalStateException if etcd did not answer within the request timeout
     */
    public LockSnapshot describeLock(String key, int maxEntries) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("Lock key must not be " + ((key == null) ? "null" : "empty"));
        }
        return this.inspector.describe(key, positive(maxEntries));
    }

    /**
     * Reads from etcd every lock under this registry's namespace that has a holder or a waiter, in
     * every process that shares the namespace. For operators and tools.
     * @param maxEntries at most this many queue entries are read; the result says whether more exist
     * @return the locks, ordered by key
     * @throws IllegalStateException if etcd did not answer within the request timeout
     */
    public NamespaceSnapshot describeLocks(int maxEntries) {
        return this.inspector.describeAll(positive(maxEntries));
    }

    private static int positive(int maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive, but was " + maxEntries);
        }
        return maxEntries;
    }

    /** @return running totals of acquisitions, timeouts, losses and etcd errors of this registry */
    public EtcdLockStatistics getStatistics() {
        return this.statistics;
    }

    /**
     * Holds of this registry right now: threads that own a lock and have not lost it (a reentrant
     * hold counts once). Cost grows with the number of entries this registry has in etcd.
     * @return the number of holds
     */
    public int getHeldLockCount() {
        int held = 0;
        for (QueueEntry entry : this.sessions.entries()) {
            if (entry.isHolding() && entry.lostReason() == null) {
                held++;
            }
        }
        return held;
    }

    /**
     * Threads of this registry waiting for a lock right now: at a key's unfair gate, or queued in
     * etcd behind an older entry.
     * @return the number of waiting threads
     */
    public int getWaitingThreadCount() {
        int waiting = 0;
        for (LocalKeyState state : this.keyStates.values()) {
            waiting += state.unfairGate.getQueueLength();
        }
        for (QueueEntry entry : this.sessions.entries()) {
            if (entry.isWaiting()) {
                waiting++;
            }
        }
        return waiting;
    }

    /** @return the namespace under which this registry's entries live */
    public String getNamespace() {
        return this.keyspace.namespace();
    }

    /** @return the session lease TTL as configured */
    public Duration getLeaseTtl() {
        return Duration.ofSeconds(this.leaseTtlSeconds);
    }

    /**
     * The TTL etcd granted the current session lease: etcd grants at least its minimum TTL (which
     * follows from its election timeout, 2 s with etcd's defaults), so this may exceed
     * {@link #getLeaseTtl()}. A crashed holder's locks are freed, and holds cut off from etcd are
     * reported lost, after the granted TTL.
     * @return the granted TTL, or {@code null} before the first session
     */
    public Duration getGrantedLeaseTtl() {
        return this.sessions.grantedTtl();
    }

    /** @return the identity stored with this registry's entries */
    public String getOwnerIdentity() {
        return this.ownerIdentity;
    }

    /**
     * Revokes the session lease, which deletes every entry of this registry in etcd and so
     * releases its locks; holds still open report themselves lost and waiters fail. Idempotent.
     */
    @Override
    public void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        this.sessions.close("the lock registry was closed");
        this.dispatcher.close();
        this.sessionScheduler.shutdownNow();
        this.maintenance.shutdownNow();
    }

    // ---- called by EtcdFencedLock --------------------------------------------------------------

    boolean acquire(EtcdFencedLock lock, long timeoutNanos, boolean timed, boolean interruptible)
            throws InterruptedException {
        String key = lock.getKey();
        boolean fair = lock.isFair();
        if (interruptible && Thread.interrupted()) {
            throw new InterruptedException();
        }
        assertOpen();
        long start = System.nanoTime();
        Thread current = Thread.currentThread();
        LocalKeyState state = retain(key);
        boolean acquired = false;
        try {
            LocalKeyState.Hold existing = state.holdOf(current);
            if (existing != null) {
                String lost = existing.entry.lostReason();
                if (lost != null) {
                    throw new LockLostException(key, existing.entry.fence(),
                            lost + "; unlock the lost hold before acquiring the lock again");
                }
                // The first hold keeps the key state referenced; this one must not add a reference.
                existing.count++;
                return true;
            }
            boolean passedGate = !fair && passGate(state, start, timeoutNanos, timed, interruptible);
            if (!fair && !passedGate) {
                this.statistics.timedOut();
                lock.missed(localHolderOrAhead(state, current));
                return false;
            }
            try {
                QueueEntry entry = acquireInEtcd(state, start, timeoutNanos, timed, interruptible, lock);
                if (entry != null) {
                    state.holds.put(current, new LocalKeyState.Hold(entry, passedGate));
                    acquired = true;
                    this.statistics.acquired();
                    if (logger.isDebugEnabled()) {
                        logger.debug("Acquired lock '{}' with fence {} after {} ms{}", key, entry.fence(),
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                                (entry.predecessorOwner() != null) ? ", handed over by " + entry.predecessorOwner() : "");
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

    private static boolean passGate(LocalKeyState state, long start, long timeoutNanos, boolean timed,
            boolean interruptible) throws InterruptedException {
        if (!timed) {
            if (interruptible) {
                state.unfairGate.lockInterruptibly();
            }
            else {
                state.unfairGate.lock();
            }
            return true;
        }
        // tryLock() barges into a free gate; the timed variant waits its turn. An uninterruptible
        // try-once must not use the timed variant, which throws on a pending interrupt.
        if (state.unfairGate.tryLock()) {
            return true;
        }
        long remaining = timeoutNanos - (System.nanoTime() - start);
        return interruptible && remaining > 0 && state.unfairGate.tryLock(remaining, TimeUnit.NANOSECONDS);
    }

    /**
     * Queues in etcd until owning the lock. Retries with a new entry when the entry or its session
     * is lost while waiting, and after transient etcd failures while time is left.
     * @return the owning entry, or {@code null} if the timeout passed
     */
    private QueueEntry acquireInEtcd(LocalKeyState state, long start, long timeoutNanos, boolean timed,
            boolean interruptible, EtcdFencedLock lock) throws InterruptedException {
        long deadline = start + timeoutNanos;
        long failingSince = 0;
        while (true) {
            assertOpen();
            long now = System.nanoTime();
            // An untimed wait gives up once etcd has failed for one request timeout, counted from
            // the start of the first failed attempt: later attempts get only what is left of it.
            long attemptNanos = timed ? Math.min(this.requestTimeoutNanos, Math.max(deadline - now, MIN_ATTEMPT_NANOS))
                    : (failingSince == 0) ? this.requestTimeoutNanos
                    : Math.max(0, this.requestTimeoutNanos - (now - failingSince));
            long attemptDeadline = now + attemptNanos;
            QueueEntry entry = null;
            try {
                EtcdSession current = this.sessions.current(attemptNanos, interruptible);
                entry = new QueueEntry(this.queue, state.key, state.root, entryValue(), current);
                this.sessions.register(entry);
                if (entry.acquire(deadline, timed, attemptDeadline, interruptible)) {
                    return entry;
                }
                this.sessions.unregister(entry);
                lock.missed(entry.predecessorOwner());
                return null;
            }
            catch (QueueEntry.EntryLostException ex) {
                this.sessions.unregister(entry);
                if (this.closed) {
                    throw failure(state.key, start, entry, "the lock registry was closed", null);
                }
                logger.debug("Entry for lock '{}' lost while waiting ({}); queueing again", state.key, ex.getMessage());
                if (entry.session().isAlive()) {
                    // etcd answered (the entry was deleted): a later failure starts a new request timeout.
                    failingSince = 0;
                }
                else {
                    // A lost session is etcd failing, even when a grant succeeds each time (a session
                    // can die right after a slow grant): untimed waits still give up after the request timeout.
                    failingSince = (failingSince == 0) ? System.nanoTime() : failingSince;
                    if (givenUpOnEtcd(timed, deadline, failingSince)) {
                        throw failure(state.key, start, entry, "etcd at " + this.endpoints
                                + " keeps losing the session lease: " + ex.getMessage(), ex);
                    }
                }
            }
            catch (EtcdCallFailedException ex) {
                this.sessions.unregister(entry);
                this.failures.record();
                long failedAt = System.nanoTime();
                failingSince = (failingSince == 0) ? now : failingSince;
                if (!givenUpOnEtcd(timed, deadline, failingSince)) {
                    pauseBeforeRetry(timed ? deadline - failedAt : EtcdCalls.RETRY_PAUSE_NANOS, interruptible);
                }
                // A wait that ends while etcd fails ends because of that failure, not a busy lock.
                if (givenUpOnEtcd(timed, deadline, failingSince)) {
                    throw failure(state.key, start, entry, "etcd at " + this.endpoints + " is unavailable: "
                            + ex.getMessage(), ex);
                }
            }
            catch (InterruptedException | RuntimeException ex) {
                this.sessions.unregister(entry);
                throw ex;
            }
            if (timed && deadline - System.nanoTime() <= 0) {
                lock.missed((entry != null) ? entry.predecessorOwner() : null);
                return null;
            }
        }
    }

    /**
     * Who a thread that timed out at the unfair gate was behind, from local state only: another
     * thread of this process holding the key, or what that thread's entry waits for in etcd.
     */
    private String localHolderOrAhead(LocalKeyState state, Thread current) {
        for (Map.Entry<Thread, LocalKeyState.Hold> hold : state.holds.entrySet()) {
            if (hold.getKey() != current && hold.getValue().entry.lostReason() == null) {
                return this.ownerIdentity + '/' + hold.getKey().getName();
            }
        }
        for (QueueEntry entry : this.sessions.entries()) {
            if (entry.isWaiting() && entry.lockKey().equals(state.key)) {
                return entry.predecessorOwner();
            }
        }
        return null;
    }

    /** Timed waits give up at their deadline, untimed ones after failing for one request timeout. */
    private boolean givenUpOnEtcd(boolean timed, long deadline, long failingSince) {
        long now = System.nanoTime();
        return timed ? deadline - now <= 0 : now - failingSince >= this.requestTimeoutNanos;
    }

    private static void pauseBeforeRetry(long remainingNanos, boolean interruptible) throws InterruptedException {
        long pause = Math.min(EtcdCalls.RETRY_PAUSE_NANOS, Math.max(0, remainingNanos));
        try {
            TimeUnit.NANOSECONDS.sleep(pause);
        }
        catch (InterruptedException ex) {
            if (interruptible) {
                throw ex;
            }
            Thread.currentThread().interrupt();
        }
    }

    private LockAcquisitionException failure(String key, long start, QueueEntry entry, String message,
            Throwable cause) {
        this.statistics.failed();
        String holder = (entry != null) ? entry.predecessorOwner() : null;
        return new LockAcquisitionException(key, Duration.ofNanos(System.nanoTime() - start), holder, message, cause);
    }

    void release(String key) {
        Thread current = Thread.currentThread();
        LocalKeyState state = this.keyStates.get(key);
        LocalKeyState.Hold hold = (state != null) ? state.holdOf(current) : null;
        if (hold == null) {
            throw new IllegalMonitorStateException(
                    "Lock '" + key + "' is not held by the current thread (" + current.getName() + ")");
        }
        QueueEntry entry = hold.entry;
        if (--hold.count > 0) {
            String lost = entry.lostReason();
            if (lost != null) {
                throw new LockLostException(key, entry.fence(), lost);
            }
            return;
        }
        state.holds.remove(current);
        this.sessions.unregister(entry);
        String lost = entry.lostReason();
        try {
            if (lost != null) {
                entry.discard();
            }
            else if (!entry.release()) {
                lost = QueueEntry.ENTRY_DELETED;
            }
            else {
                logger.debug("Released lock '{}' with fence {}", key, entry.fence());
            }
        }
        catch (EtcdCallFailedException ex) {
            this.failures.record();
            logger.warn("Release of lock '{}' (fence {}) not confirmed by etcd at {} ({}); "
                    + "retrying in the background", key, entry.fence(), this.endpoints, ex.getMessage());
        }
        finally {
            if (hold.passedGate) {
                state.unfairGate.unlock();
            }
            releaseState(state);
        }
        if (lost != null) {
            throw new LockLostException(key, entry.fence(), lost);
        }
    }

    long fence(String key) {
        LocalKeyState.Hold hold = currentHold(key);
        if (hold == null) {
            throw new IllegalMonitorStateException(
                    "Lock '" + key + "' is not held by the current thread (" + Thread.currentThread().getName() + ")");
        }
        return hold.entry.fence();
    }

    int holdCount(String key) {
        LocalKeyState.Hold hold = currentHold(key);
        return (hold != null) ? hold.count : 0;
    }

    boolean isHeldByCurrentThread(String key) {
        LocalKeyState.Hold hold = currentHold(key);
        return hold != null && hold.entry.lostReason() == null;
    }

    boolean isLocked(String key) {
        LocalKeyState state = this.keyStates.get(key);
        if (state != null && state.heldByAnyThread()) {
            return true;
        }
        return !readQueue(key, 1).isEmpty();
    }

    /** Identity of the oldest entry (the holder) of {@code key}, or {@code null} if there is none. */
    String holder(String key) {
        List<KeyValue> oldest = readQueue(key, 1);
        return oldest.isEmpty() ? null : EntryValue.decode(oldest.get(0).getValue()).describe();
    }

    private List<KeyValue> readQueue(String key, int limit) {
        GetOption option = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(limit)
            .build();
        try {
            GetResponse response = EtcdCalls.awaitUninterruptibly(
                    this.client.getKVClient().get(this.keyspace.root(key), option), this.requestTimeoutNanos,
                    "lock state read");
            return response.getKvs();
        }
        catch (EtcdCallFailedException ex) {
            throw new IllegalStateException("Could not read the state of lock '" + key + "' from etcd at "
                    + this.endpoints + ": " + ex.getMessage(), ex);
        }
    }

    private LocalKeyState.Hold currentHold(String key) {
        LocalKeyState state = this.keyStates.get(key);
        return (state != null) ? state.holdOf(Thread.currentThread()) : null;
    }

    // ---- local state ---------------------------------------------------------------------------

    private void onHoldLost(QueueEntry entry, String reason) {
        if (!this.closed) {
            this.statistics.holdLost();
            logger.warn("Lock '{}' (fence {}) lost while held: {}", entry.lockKey(), entry.fence(), reason);
        }
    }

    private LocalKeyState retain(String key) {
        return this.keyStates.compute(key, (k, state) -> {
            LocalKeyState retained = (state != null) ? state : new LocalKeyState(k, this.keyspace.root(k));
            retained.users++;
            return retained;
        });
    }

    private void releaseState(LocalKeyState state) {
        this.keyStates.computeIfPresent(state.key, (k, current) -> (--current.users == 0) ? null : current);
    }

    private ByteSequence entryValue() {
        return EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(), System.currentTimeMillis());
    }

    private void assertOpen() {
        if (this.closed) {
            throw new IllegalStateException("EtcdLockRegistry for namespace '" + this.keyspace.namespace()
                    + "' is closed");
        }
    }

    /**
     * Threads of this registry waiting for {@code key}: at the unfair gate, or with an entry in
     * etcd behind an older one. For tests and diagnostics.
     */
    int queuedWaiters(String key) {
        LocalKeyState state = this.keyStates.get(key);
        int atGate = (state != null) ? state.unfairGate.getQueueLength() : 0;
        int inEtcd = 0;
        for (QueueEntry entry : this.sessions.entries()) {
            if (entry.isWaiting() && entry.lockKey().equals(key)) {
                inEtcd++;
            }
        }
        return atGate + inEtcd;
    }

    /** For tests: the lease of the live session, or 0 if there is none. */
    long liveLeaseId() {
        return this.sessions.liveLeaseId();
    }

    /** For tests: whether some thread is granting a session lease right now. */
    boolean sessionGrantInProgress() {
        return this.sessions.grantInProgress();
    }

    /** For tests: keep-alive calls whose gRPC stream has not ended yet. */
    int openKeepAliveCalls() {
        return this.sessions.openKeepAliveCalls();
    }

    /** For tests: runs {@code task} on the thread that deletes entries and watches etcd. */
    void runOnMaintenanceThread(Runnable task) {
        this.maintenance.execute(task);
    }

    /** See {@link SessionKeeper#sweepForGhosts()}; for tests. */
    void sweepForGhosts() {
        this.sessions.sweepForGhosts();
    }

    EtcdKeyspace keyspace() {
        return this.keyspace;
    }

    /** Builds an {@link EtcdLockRegistry}. */
    public static final class Builder {

        private final Client client;

        private String namespace = DEFAULT_NAMESPACE;

        private Duration leaseTtl = DEFAULT_LEASE_TTL;

        private String ownerIdentity = defaultOwnerIdentity();

        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private String endpoints = "the configured endpoints";

        private Builder(Client client) {
            this.client = Objects.requireNonNull(client, "etcd client must not be null");
        }

        /**
         * Sets the prefix of every key the registry writes (default {@value #DEFAULT_NAMESPACE}).
         * Registries on different namespaces never share or see each other's entries, also when
         * one namespace is nested in the other.
         * @param namespace a prefix ending with {@code /}, without {@code #} (which separates the
         * namespace from lock keys)
         * @return this builder
         */
        public Builder namespace(String namespace) {
            String problem = EtcdKeyspace.namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("etcd namespace " + problem);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * Sets the session lease TTL (default 10 s): how long a crashed holder can block others,
         * and how long etcd may be unreachable before holds are considered lost. etcd leases
         * have whole seconds: the TTL must be a whole number of seconds, at least one.
         * @param leaseTtl the TTL
         * @return this builder
         */
        public Builder leaseTtl(Duration leaseTtl) {
            if (leaseTtl == null || leaseTtl.compareTo(Duration.ofSeconds(1)) < 0 || leaseTtl.getNano() != 0) {
                throw new IllegalArgumentException("etcd lease TTL must be a whole number of seconds, at least 1s, "
                        + "but was " + leaseTtl);
            }
            this.leaseTtl = leaseTtl;
            return this;
        }

        /**
         * Sets the identity stored with every entry, shown in errors and tools as the holder
         * (default {@code <host>:<pid>}); the thread name is appended per entry.
         * @param ownerIdentity a non-empty identity
         * @return this builder
         */
        public Builder ownerIdentity(String ownerIdentity) {
            if (ownerIdentity == null || ownerIdentity.isBlank()) {
                throw new IllegalArgumentException("Owner identity must not be null or blank");
            }
            if (ownerIdentity.indexOf('\n') >= 0 || ownerIdentity.indexOf('\r') >= 0) {
                // The entry value is line-based: owner, thread, time.
                throw new IllegalArgumentException("Owner identity must not contain line breaks, but was '"
                        + ownerIdentity.replace("\n", "\\n").replace("\r", "\\r") + "'");
            }
            this.ownerIdentity = ownerIdentity;
            return this;
        }

        /**
         * Sets the bound on each etcd request (default 5 s).
         * @param requestTimeout a positive duration
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
                throw new IllegalArgumentException("Request timeout must be positive, but was " + requestTimeout);
            }
            this.requestTimeout = requestTimeout;
            return this;
        }

        /**
         * Names the endpoints the client connects to, for error messages only.
         * @param endpoints the endpoint URLs
         * @return this builder
         */
        public Builder endpoints(Collection<String> endpoints) {
            this.endpoints = String.valueOf(List.copyOf(endpoints));
            return this;
        }

        /** @return a new registry */
        public EtcdLockRegistry build() {
            return new EtcdLockRegistry(this);
        }

        private static String defaultOwnerIdentity() {
            return hostName() + ":" + ProcessHandle.current().pid();
        }

        private static String hostName() {
            String fromEnvironment = System.getenv("HOSTNAME");
            if (fromEnvironment != null && !fromEnvironment.isBlank()) {
                return fromEnvironment;
            }
            try {
                return InetAddress.getLocalHost().getHostName();
            }
            catch (UnknownHostException ex) {
                return "unknown-host";
            }
        }
    }
}
