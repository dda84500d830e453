package io.github.distlock.core;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
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
     * One unfair store entry of this process from its acquisition to its release to the store,
     * across the threads it is passed to. Fields other than the contention fields are touched
     * only by the thread that holds the unfair gate.
     */
    static final class Tenure {

        final StoreEntry entry;

        /** When the entry started owning the key. */
        final long heldSince;

        /** Whether another entry is known (or, where the store cannot tell, assumed) to wait behind this one. */
        volatile boolean contended;

        /** When {@link #contended} turned true. */
        volatile long contendedSince;

        /** Whether the store reports entries queued behind this one; set before the tenure is shared. */
        boolean reportsQueue = true;

        /** The local handoff number of the current or last hold. */
        int pass;

        /** While kept without a holder: whether it lingers (no local waiter) rather than awaits a local taker. */
        boolean lingering;

        /** While kept without a holder: when the timer gives it back to the store if no thread took it. */
        long keptUntil;

        Tenure(StoreEntry entry, long heldSince) {
            this.entry = entry;
            this.heldSince = heldSince;
        }
    }

    final String key;

    final ReentrantLock unfairGate = new ReentrantLock(false);

    final Map<Thread, Hold> holds = new ConcurrentHashMap<>(2);

    /** Entries of this process's acquisitions in progress, written or about to be. */
    final Set<StoreEntry> pending = ConcurrentHashMap.newKeySet(2);

    /**
     * The unfair entry this process owns while none of its threads holds it. Written only by the
     * thread holding {@link #unfairGate}; volatile for the timer's check without the gate.
     * Invariant: while it is set, it counts as one of {@link #users}, and a release timer is armed.
     */
    volatile @Nullable Tenure kept;

    /** Whether a release timer of {@link #kept} is scheduled and has not started its check. */
    final AtomicBoolean timerArmed = new AtomicBoolean();

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
