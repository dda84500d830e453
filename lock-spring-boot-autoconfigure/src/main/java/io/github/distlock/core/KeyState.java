package io.github.distlock.core;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.store.StoreEntry;
import org.jspecify.annotations.Nullable;

/**
 * What one process knows about one key: which of its threads hold it, the local gate that unfair
 * acquirers pass first so that one process has at most one unfair entry per key in the store, and
 * the unfair entry the process keeps while none of its threads holds it (passed on, or lingering).
 *
 * <p>A thread can have a hold here while another thread of the process holds the key in the store
 * only when the first hold was lost and not unlocked yet; holds are therefore kept per thread.
 * The state is shared by every lock object of the key and removed when no thread uses it and no
 * entry is kept ({@link #users}, guarded by the core's map compute).
 */
final class KeyState {

    /** One thread's hold: reentrant count over one store entry. Touched only by its thread. */
    static final class Hold {

        final StoreEntry entry;

        /** The unfair tenure this hold belongs to, or {@code null} for a fair hold (which took no gate). */
        final @Nullable Tenure tenure;

        /** The lock's fence for this hold: the store fence with the local handoff number. */
        final long fence;

        int count = 1;

        Hold(StoreEntry entry, @Nullable Tenure tenure, int pass) {
            this.entry = entry;
            this.tenure = tenure;
            this.fence = Fences.of(entry.fence(), pass);
        }

        boolean passedGate() {
            return this.tenure != null;
        }
    }

    /**
     * When the holds of one unfair entry were unlocked while the process kept the entry (or, for
     * the last one, when its release got no answer): the store never saw those unlocks, so a loss
     * of the entry that it reports later may have struck any of them that ended after the store
     * last showed the entry present. Written by the thread holding the unfair gate; read once, under
     * this object's monitor, by a gate holder or by a store thread after the tenure ended (the
     * tenure's monitor, taken by the keep or take after each write and by the end, orders them).
     */
    static final class KeptPasses {

        /** The {@link System#nanoTime()} of each kept pass's unlock, by pass; grown as passes go. */
        private long[] unlockedAt = new long[4];

        /** The last pass whose unlock was noted, or -1. */
        private int last = -1;

        private boolean reported;

        /** Called by the thread holding the unfair gate, before the entry is kept (or its release failed). */
        void unlocked(int pass, long at) {
            if (pass >= this.unlockedAt.length) {
                this.unlockedAt = Arrays.copyOf(this.unlockedAt, Math.min(this.unlockedAt.length * 4, Fences.MAX_PASS + 1));
            }
            this.unlockedAt[pass] = at;
            this.last = pass;
        }

        /**
         * Answers once: the kept passes, up to {@code upTo}, unlocked at or after the store last
         * showed the entry present.
         * @param confirmedAt the entry's {@link StoreEntry#confirmedAt()}
         * @param upTo the last pass to consider (a pass still held is told at its own unlock)
         * @return their passes, or {@code null} if none or if answered before
         */
        synchronized @Nullable Range lostAfterUnlock(long confirmedAt, int upTo) {
            int last = Math.min(upTo, this.last);
            if (this.reported || last < 0) {
                return null;
            }
            this.reported = true;
            if (confirmedAt == StoreEntry.NEVER_CONFIRMED) {
                return new Range(0, last);
            }
            int first = last + 1;
            // Unlock times grow with the pass: the holds that ended before the confirmation are at the front.
            while (first > 0 && this.unlockedAt[first - 1] - confirmedAt >= 0) {
                first--;
            }
            return (first <= last) ? new Range(first, last) : null;
        }

        /** Passes {@code first} to {@code last}, both included. */
        record Range(int first, int last) {
        }
    }

    /**
     * One unfair store entry of this process from its acquisition to its release to the store,
     * across the threads it is passed to. Fields other than the contention fields and the status
     * are touched only by the thread that holds the unfair gate.
     */
    static final class Tenure {

        /** Who has the entry: a thread, the process between holds, or no one any more. */
        enum Status { HELD, KEPT, ENDED }

        final StoreEntry entry;

        /*
         * Invariant: the status and whether the store reported the entry lost are guarded by the
         * tenure's monitor, and a loss report classifies the loss under it by the status: so a
         * report either comes first and stops a change (the entry is not kept, or not taken) or
         * comes after it and sees it, and the loss counts as a lost hold exactly when a thread has
         * the entry. Nothing else is called under the monitor: a store may report a loss (and so
         * take this monitor) from inside any of its own calls, for another key's tenure as well.
         * A store sets the lost reason before it reports, so a thread may see the reason first and
         * drop the entry before the report arrives; the report may then find the key on a new
         * tenure, or forgotten, so such entries are remembered apart until it comes
         * (LocalHandoffs#droppedBeforeReport).
         */
        private Status status = Status.HELD;

        private boolean lost;

        /*
         * Guarded by the monitor too: whether the process keeps the entry, from the keep until a
         * thread takes it or the release that gives it back has returned, and the future that
         * fair acquisitions of the process wait on meanwhile. Whoever ends the keeping completes
         * it, so every fair acquisition that saw the entry kept waits for that one give-back,
         * whichever thread carries it out.
         */
        private boolean keeping;

        private @Nullable CompletableFuture<Void> keepingEnded;

        /** A fair acquisition of the process waits for the lingering entry: the next check gives it back. */
        volatile boolean giveBackWanted;

        /** Whether another entry is known (or, where the store cannot tell, assumed) to wait behind this one. */
        volatile boolean contended;

        /** When {@link #contended} turned true. */
        volatile long contendedSince;

        /** Whether the store reports entries queued behind this one; set before the tenure is shared. */
        boolean reportsQueue = true;

        /**
         * The local handoff number of the current or last hold: raised under the monitor as a
         * thread takes the entry, so that a loss report reads the pass of the hold it classifies.
         */
        int pass;

        /** When the holds of this tenure were unlocked while the entry was kept. */
        final KeptPasses keptPasses = new KeptPasses();

        /** While kept without a holder: whether it lingers (no local waiter) rather than awaits a local taker. */
        boolean lingering;

        /** While kept without a holder: when the timer gives it back to the store if no thread took it. */
        long keptUntil;

        Tenure(StoreEntry entry) {
            this.entry = entry;
        }

        /**
         * A holding thread leaves the entry to the process.
         * @param knownLost whether the entry said it was lost when asked just before
         * @return false if it was lost: then it stays held, and the loss is the holder's
         */
        synchronized boolean keepIfAlive(boolean knownLost) {
            if (this.lost || knownLost) {
                return false;
            }
            this.status = Status.KEPT;
            this.keeping = true;
            this.giveBackWanted = false;
            return true;
        }

        /**
         * A thread takes the kept entry, as the next pass.
         * @param knownLost whether the entry said it was lost when asked just before
         * @return false if it was lost meanwhile: then it ended, with no hold lost
         */
        synchronized boolean takeIfAlive(boolean knownLost) {
            endKeeping();
            if (this.lost || knownLost) {
                this.status = Status.ENDED;
                return false;
            }
            this.status = Status.HELD;
            this.pass++;
            return true;
        }

        /** The release that gave the kept entry back to the store (or dropped it) has returned. */
        synchronized void givenBack() {
            endKeeping();
        }

        /**
         * A fair acquisition of the process asks for the kept entry to go back to the store.
         * @return completes once the entry is no longer kept (taken by a thread or given back), or
         * {@code null} if it is no longer kept already
         */
        synchronized @Nullable CompletableFuture<Void> awaitKeepingEnd() {
            if (!this.keeping) {
                return null;
            }
            this.giveBackWanted = true;
            if (this.keepingEnded == null) {
                this.keepingEnded = new CompletableFuture<>();
            }
            return this.keepingEnded;
        }

        private void endKeeping() {
            this.keeping = false;
            if (this.keepingEnded != null) {
                // Only fair acquisitions' bounded gets wait on it: completing runs no code of theirs here.
                this.keepingEnded.complete(null);
                this.keepingEnded = null;
            }
        }

        /** The process gives the kept entry back to the store (or drops it): a loss from now on is no lost hold. */
        synchronized void end() {
            this.status = Status.ENDED;
        }

        /** @return whether the store's report of the entry's loss came */
        synchronized boolean lossReported() {
            return this.lost;
        }

        /**
         * The store reported the entry lost.
         * @return who had the entry then, and the pass of the hold if a thread had it
         */
        synchronized Loss lost() {
            this.lost = true;
            return new Loss(this.status, this.pass);
        }

        /** Who had the entry when the store reported it lost: {@code pass} is the hold's if {@code status} is HELD. */
        record Loss(Status status, int pass) {
        }
    }

    /** A scheduled check of {@link #kept}, due at {@link #deadline} (a {@link System#nanoTime()}). */
    static final class ReleaseTimer {

        final long deadline;

        /** The timer's task once scheduled, so that an earlier timer replacing this one can cancel it. */
        volatile @Nullable Future<?> scheduled;

        ReleaseTimer(long deadline) {
            this.deadline = deadline;
        }
    }

    final String key;

    final ReentrantLock unfairGate = new ReentrantLock(false);

    final Map<Thread, Hold> holds = new ConcurrentHashMap<>(2);

    /** Entries of this process's acquisitions in progress, written or about to be. */
    final Set<StoreEntry> pending = ConcurrentHashMap.newKeySet(2);

    /**
     * The latest unfair tenure of this process on the key. Tenures follow one another under
     * {@link #unfairGate} (one ends before the next starts), so a loss the store reports for an
     * unfair entry of this process that is still in use is a loss of this tenure's entry.
     */
    volatile @Nullable Tenure tenure;

    /**
     * The unfair entry this process owns while none of its threads holds it. Written only by the
     * thread holding {@link #unfairGate}; volatile for the timer's check without the gate.
     * Invariant: while it is set, it counts as one of {@link #users}, and a check of it is
     * scheduled no later than its {@link Tenure#keptUntil}.
     */
    volatile @Nullable Tenure kept;

    /** The earliest scheduled check of {@link #kept} that has not fired yet, if any. */
    final AtomicReference<@Nullable ReleaseTimer> releaseTimer = new AtomicReference<>();

    /**
     * Since when ({@link System#nanoTime()}) the store had failed when the last unfair gate holder
     * gave up because of it, or 0 once any acquisition's store call got an answer. Unfair
     * acquirers pass the gate one at a time: the next one waited through that failure too, so it
     * counts it (from its own arrival), and an untimed acquisition gives up after one request
     * timeout however many threads were ahead of it. Written by gate holders only, cleared by any.
     */
    volatile long storeFailingSince;

    int users;

    KeyState(String key) {
        this.key = key;
    }

    @Nullable Hold holdOf(Thread thread) {
        return this.holds.get(thread);
    }

    /** A thread of this process, other than {@code except}, that holds the key and has not lost it. */
    @Nullable Thread liveHolderOtherThan(@Nullable Thread except) {
        for (Map.Entry<Thread, Hold> hold : this.holds.entrySet()) {
            if (hold.getKey() != except && hold.getValue().entry.lostReason() == null) {
                return hold.getKey();
            }
        }
        return null;
    }
}
