package io.github.distlock.core;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.distlock.LocalHandoff;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.LockKeys;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an unfair store entry inside the process between holds (see {@link LocalHandoff}): the
 * decision at unlock, the take at the next acquisition, and the timer that gives a kept entry
 * back to the store when no thread took it in time or another process queued behind it.
 *
 * <p>Invariants: a key has at most one unfair entry of this process (the unfair gate), and
 * {@link KeyState#kept} is written only by the thread holding that gate, so a kept entry is
 * either taken by exactly one thread or released to the store exactly once. Holds are passed
 * only from a thread that held the entry to the next, so at most one thread holds the key; the
 * entry never left the store in between, so no other process can hold it meanwhile.
 */
final class LocalHandoffs {

    private static final Logger logger = LoggerFactory.getLogger(LocalHandoffs.class);

    /** How soon a timer that found the gate busy looks again. */
    private static final long BUSY_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Shared by every registry: only schedules; checks run on each registry's {@link #releases}. */
    private static final ScheduledExecutorService TIMER = timer();

    /**
     * Release threads of one registry, at most: a store that stalls holds each release for up to its
     * request timeout, and many kept entries due at once must not cost a thread each.
     */
    static final int MAX_RELEASE_THREADS = 16;

    /** What {@link #heldPass} answers for a loss that no thread of the process held. */
    static final int NOT_HELD = -1;

    private final LockStore store;

    /**
     * Runs checks and store releases, in the order they became due once all its threads are busy;
     * threads come and go with demand, so no registry needs closing. Its own per registry, so that a
     * store that stalls delays no other registry's releases.
     */
    private final ExecutorService releases;

    private final long windowNanos;

    private final long lingerNanos;

    private final Consumer<KeyState> releaseState;

    private final LostPasses lostPasses;

    private final AtomicBoolean lingerUnsupportedLogged = new AtomicBoolean();

    /**
     * Entries dropped without a holder because they said they were lost, before the store's report
     * of that loss came: the report is no lost hold, though it cannot find their tenure any more.
     * Weak, so that an entry whose report never comes is not kept; touched only on losses.
     */
    private final Set<StoreEntry> droppedBeforeReport = Collections.newSetFromMap(
            Collections.synchronizedMap(new WeakHashMap<>()));

    /**
     * Entries whose tenure ended with a hold that found them lost at its unlock, with that hold's
     * pass: the store's report of that loss may come once the key is on a new tenure, or
     * forgotten, and must still name the hold. Weak, as {@link #droppedBeforeReport}.
     */
    private final Map<StoreEntry, Integer> lostAtUnlock = Collections.synchronizedMap(new WeakHashMap<>());

    /** Tells of holds that were passed on and unlocked on an entry that the store may have lost meanwhile. */
    @FunctionalInterface
    interface LostPasses {

        /**
         * @param entry the lost entry
         * @param first the first lost pass
         * @param last the last lost pass
         * @param reason why the store no longer has it
         */
        void lost(StoreEntry entry, int first, int last, String reason);
    }

    /**
     * @param store the store the entries belong to
     * @param settings when to keep entries
     * @param releaseState drops the reference a kept entry held on its key state
     * @param lostPasses told of holds passed on and unlocked that a lost entry may no longer have backed
     */
    LocalHandoffs(LockStore store, LocalHandoff settings, Consumer<KeyState> releaseState, LostPasses lostPasses) {
        this.store = store;
        // Named after the store's namespace, so that a thread dump tells whose releases wait.
        this.releases = releases(store.namespace());
        this.windowNanos = settings.window().toNanos();
        this.lingerNanos = settings.linger().toNanos();
        this.releaseState = releaseState;
        this.lostPasses = lostPasses;
    }

    private boolean enabled() {
        return this.windowNanos > 0 || this.lingerNanos > 0;
    }

    /**
     * Starts the tenure of an unfair entry that just acquired its key from the store.
     * @return the tenure, which the hold of pass 0 carries
     */
    KeyState.Tenure started(KeyState state, StoreEntry entry) {
        KeyState.Tenure tenure = new KeyState.Tenure(entry);
        if (enabled() && !entry.whenQueuedBehind(() -> queuedBehind(state, tenure))) {
            // The store cannot tell: assume someone waits from the start, so passes end after the window.
            tenure.contendedSince = System.nanoTime();
            tenure.contended = true;
            tenure.reportsQueue = false;
        }
        state.tenure = tenure;
        return tenure;
    }

    /**
     * Takes the entry the process kept, if any. Called by a thread that just passed the unfair gate.
     * @return the new hold, or {@code null} if no live entry was kept
     */
    KeyState.@Nullable Hold take(KeyState state) {
        KeyState.Tenure kept = state.kept;
        if (kept == null) {
            return null;
        }
        // Asked outside the tenure's monitor: some stores notice a loss when asked, and report it then.
        boolean alive = kept.takeIfAlive(kept.entry.lostReason() != null);
        state.kept = null;
        // The taker is a user of the state itself: the kept entry's reference goes.
        this.releaseState.accept(state);
        if (!alive) {
            // Lost while no thread held it: no thread holds it to tell, but those that held it may have lost it.
            droppedWithoutHolder(kept);
            reportLostPasses(kept.entry, kept.keptPasses, Fences.MAX_PASS, null);
            kept.entry.discard();
            return null;
        }
        return new KeyState.Hold(kept.entry, kept, kept.pass);
    }

    /**
     * Decides, at the last unlock of an unfair hold whose entry is alive, whether the process
     * keeps the entry instead of releasing it. Called by the thread holding the unfair gate.
     * @return whether the entry is kept; the releasing thread's reference on the state then
     * passes to it. Not kept if it was lost: the caller reports the lost hold.
     */
    boolean keep(KeyState state, KeyState.Tenure tenure) {
        if (!enabled() || tenure.pass >= Fences.MAX_PASS || this.store.isClosed()) {
            return false;
        }
        long now = System.nanoTime();
        if (state.unfairGate.hasQueuedThreads()) {
            if (this.windowNanos == 0 || (tenure.contended && now - tenure.contendedSince >= this.windowNanos)) {
                return false;
            }
            tenure.lingering = false;
            // The waiter takes it within microseconds; the timer only covers one that gave up meanwhile.
            tenure.keptUntil = now + this.windowNanos;
        }
        else {
            if (this.lingerNanos == 0 || tenure.contended) {
                if (this.lingerNanos > 0 && !tenure.reportsQueue
                        && this.lingerUnsupportedLogged.compareAndSet(false, true)) {
                    logger.info("Unfair locks do not linger on {}: it cannot tell without a round trip when another "
                            + "process waits", this.store.describe());
                }
                return false;
            }
            tenure.lingering = true;
            tenure.keptUntil = now + this.lingerNanos;
        }
        tenure.keptPasses.unlocked(tenure.pass, now);
        // Asked outside the tenure's monitor: some stores notice a loss when asked, and report it then.
        if (!tenure.keepIfAlive(tenure.entry.lostReason() != null)) {
            return false;
        }
        state.kept = tenure;
        arm(state, tenure.keptUntil);
        // The store's signals (and fair acquisitions asking for a give-back) look at kept after
        // setting what they signal, and this looks at what they set after setting kept (all
        // volatile): a signal that came while the decision was made is seen here, or its own look
        // saw kept and it checks.
        if ((tenure.lingering && (tenure.contended || tenure.giveBackWanted)) || tenure.entry.lostReason() != null) {
            submitCheck(state);
        }
        return true;
    }

    /** The store saw an entry queued behind the tenure's: a lingering entry goes back at once. */
    private void queuedBehind(KeyState state, KeyState.Tenure tenure) {
        tenure.contendedSince = System.nanoTime();
        tenure.contended = true;
        if (state.kept == tenure) {
            submitCheck(state);
        }
    }

    /**
     * Tells a loss that the store reports for {@code entry} apart from a lost hold: an unfair
     * entry that the process keeps with no thread holding it (it is dropped at once rather than
     * when its time is up), or that it is giving back, was not held.
     * Holds that the process passed on and that were unlocked on an entry it no longer keeps are
     * reported as lost here if no one did before.
     * @return the local handoff number of the hold that a thread of the process had on the entry,
     * so that the loss is a lost hold (0 for a fair entry), or {@link #NOT_HELD}
     */
    int heldPass(@Nullable KeyState state, StoreEntry entry) {
        KeyState.Tenure tenure = (state != null) ? state.tenure : null;
        if (tenure == null || tenure.entry != entry) {
            // Looked at after the tenure: an entry is remembered before its key's next tenure starts.
            Integer lostPass = this.lostAtUnlock.remove(entry);
            if (lostPass != null) {
                return lostPass;
            }
            return this.droppedBeforeReport.remove(entry) ? NOT_HELD : 0;
        }
        KeyState.Tenure.Loss loss = tenure.lost();
        KeyState.Tenure.Status status = loss.status();
        if (status == KeyState.Tenure.Status.KEPT) {
            // The check gives it back and reports the passes.
            submitCheck(state);
        }
        else if (status == KeyState.Tenure.Status.ENDED) {
            reportLostPasses(entry, tenure.keptPasses, Fences.MAX_PASS, null);
        }
        return (status == KeyState.Tenure.Status.HELD) ? loss.pass() : NOT_HELD;
    }

    /**
     * The last hold of a tenure found its entry lost at its unlock: the store's report of the loss
     * may come after the key moved on. Called by that hold's thread, which still has the unfair gate,
     * so before the key's next tenure starts.
     */
    void endedLost(KeyState.Tenure tenure) {
        if (!tenure.lossReported()) {
            this.lostAtUnlock.put(tenure.entry, tenure.pass);
        }
    }

    /**
     * Reports the holds of an entry known lost (or whose release the store did not confirm) that
     * were unlocked, up to {@code upTo}, at or after the store last confirmed the entry; once per
     * tenure.
     * @param reason why, or {@code null} for the entry's lost reason
     */
    void reportLostPasses(StoreEntry entry, KeyState.KeptPasses passes, int upTo, @Nullable String reason) {
        KeyState.KeptPasses.Range lost = passes.lostAfterUnlock(entry.confirmedAt(), upTo);
        if (lost != null) {
            this.lostPasses.lost(entry, lost.first(), lost.last(), (reason != null) ? reason
                    : Objects.requireNonNullElse(entry.lostReason(), "its lock entry was lost"));
        }
    }

    /** Why holds count as lost whose entry's release (or give-back) the store did not confirm. */
    static String unconfirmedRelease(LockStore store, String failure) {
        return "the release of their lock entry was not confirmed by " + store.describe() + " (" + failure
                + "): whether the store still had the entry when they ended is unknown";
    }

    /**
     * Schedules a check at {@code deadline}, unless one is already scheduled no later; an earlier
     * one replaces a later one, whose check the earlier one's schedules again if still needed.
     */
    private void arm(KeyState state, long deadline) {
        while (true) {
            KeyState.ReleaseTimer armed = state.releaseTimer.get();
            if (armed != null && armed.deadline - deadline <= 0) {
                return;
            }
            KeyState.ReleaseTimer timer = new KeyState.ReleaseTimer(deadline);
            if (state.releaseTimer.compareAndSet(armed, timer)) {
                timer.scheduled = TIMER.schedule(() -> fired(state, timer),
                        Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                Future<?> replaced = (armed != null) ? armed.scheduled : null;
                if (replaced != null) {
                    // Its firing would find itself replaced and do nothing; until then it would keep the
                    // task (and the key's state) in the timer's queue, one per replacement on a hot key.
                    replaced.cancel(false);
                }
                return;
            }
        }
    }

    private void fired(KeyState state, KeyState.ReleaseTimer timer) {
        // Cleared before the check, so that the check (or an entry kept from now on) can arm again.
        if (state.releaseTimer.compareAndSet(timer, null)) {
            submitCheck(state);
        }
    }

    private void submitCheck(KeyState state) {
        this.releases.execute(() -> check(state));
    }

    /**
     * Gives the kept entry back to the store if it is due: its time is up, it lingers and another
     * entry queued behind it or a fair acquisition of the process waits for it, it was lost, or the
     * store was closed. Runs on a release thread.
     */
    private void check(KeyState state) {
        if (state.kept == null) {
            return;
        }
        if (!state.unfairGate.tryLock()) {
            // A thread is passing the gate, and takes the entry; look again shortly in case it was the giver.
            arm(state, System.nanoTime() + BUSY_RECHECK_NANOS);
            return;
        }
        KeyState.Tenure released = null;
        try {
            KeyState.Tenure kept = state.kept;
            if (kept == null) {
                return;
            }
            long now = System.nanoTime();
            boolean due = now - kept.keptUntil >= 0 || (kept.lingering && (kept.contended || kept.giveBackWanted))
                    || this.store.isClosed() || kept.entry.lostReason() != null;
            if (!due) {
                arm(state, kept.keptUntil);
                return;
            }
            giveBack(state, kept);
            released = kept;
        }
        finally {
            state.unfairGate.unlock();
            if (released != null) {
                this.releaseState.accept(state);
            }
        }
    }

    /**
     * A fair acquisition found the process's entry of the key lingering: has it given back to the
     * store first, by a check on a release thread, so that the fair entry does not queue behind it
     * (a try without waiting would fail on a key that no thread holds). A give-back already under
     * way (the timer's, another fair acquisition's) is waited for, not asked for again. An entry
     * kept for a thread waiting at the gate stays for that thread, as fair entries of other
     * processes queue behind it too; so does one that such a thread takes meanwhile.
     * @return completes once the entry was given back or taken, or {@code null} if no entry lingers
     */
    @Nullable CompletableFuture<Void> giveBackLingering(KeyState state) {
        KeyState.Tenure seen = state.kept;
        if (seen == null || !seen.lingering) {
            return null;
        }
        CompletableFuture<Void> keepingEnded = seen.awaitKeepingEnd();
        if (keepingEnded == null) {
            return null;
        }
        try {
            // A check that finds the gate busy looks again shortly, until the entry is taken or given back.
            submitCheck(state);
        }
        catch (RejectedExecutionException ex) {
            return null;
        }
        return keepingEnded;
    }

    /** Releases the kept entry to the store. Called under the unfair gate. */
    private void giveBack(KeyState state, KeyState.Tenure kept) {
        // Ended before the release, so that a loss the release finds is not reported as a lost hold.
        kept.end();
        String unconfirmed = releaseToStore(kept.entry);
        // Looked at after the release: the entry has ended, so its lost reason is final. A loss set
        // during the release is reported after it, perhaps once the key's state is gone.
        if (kept.entry.lostReason() != null) {
            droppedWithoutHolder(kept);
            reportLostPasses(kept.entry, kept.keptPasses, Fences.MAX_PASS, null);
        }
        else if (unconfirmed != null) {
            // No store reports what its retry in the background finds, and a retry finding the entry gone
            // could not tell a deletion from its own first attempt: the holds since the last confirmation
            // may have been lost, and nothing later would say so.
            reportLostPasses(kept.entry, kept.keptPasses, Fences.MAX_PASS, unconfirmedRelease(this.store, unconfirmed));
        }
        state.kept = null;
        kept.givenBack();
    }

    /**
     * Remembers a lost entry that the process drops with no thread holding it, if the store has not
     * reported the loss yet. Called under the unfair gate, so before a new tenure of the key starts.
     */
    private void droppedWithoutHolder(KeyState.Tenure tenure) {
        if (!tenure.lossReported()) {
            this.droppedBeforeReport.add(tenure.entry);
        }
    }

    /** @return why the store did not confirm the release, which it then retries in the background, or {@code null} */
    private @Nullable String releaseToStore(StoreEntry entry) {
        if (this.store.isClosed()) {
            // Closing the store removed the registry's entries.
            return null;
        }
        try {
            if (entry.lostReason() != null) {
                entry.discard();
            }
            else if (entry.release()) {
                logger.debug("Released kept entry of lock '{}' (store fence {})", LockKeys.abbreviate(entry.lockKey()),
                        entry.fence());
            }
        }
        catch (StoreUnavailableException ex) {
            logger.warn("Release of lock '{}' (store fence {}) not confirmed by {} ({}); retrying in the background",
                    LockKeys.abbreviate(entry.lockKey()), entry.fence(), this.store.describe(), ex.getMessage());
            return String.valueOf(ex.getMessage());
        }
        catch (RuntimeException ex) {
            logger.warn("Release of lock '{}' (store fence {}) failed", LockKeys.abbreviate(entry.lockKey()), entry.fence(),
                    ex);
            return ex.toString();
        }
        return null;
    }

    private static ScheduledExecutorService timer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                DaemonThreads.named("distlock-handoff-timer"));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    private static ExecutorService releases(String namespace) {
        ThreadPoolExecutor releases = new ThreadPoolExecutor(MAX_RELEASE_THREADS, MAX_RELEASE_THREADS, 10,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                DaemonThreads.numbered("distlock-handoff-release-" + namespace));
        releases.allowCoreThreadTimeOut(true);
        return releases;
    }
}
