package io.github.distlock.core;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.store.StoreEntry;
import org.jspecify.annotations.Nullable;

/**
 * What one process knows about one key: which of its threads hold it, and the local gate that
 * unfair acquirers pass first so that one process has at most one unfair entry per key in the store.
 *
 * <p>A thread can have a hold here while another thread of the process holds the key in the store
 * only when the first hold was lost and not unlocked yet; holds are therefore kept per thread.
 * The state is shared by every lock object of the key and removed when no thread uses it
 * ({@link #users}, guarded by the core's map compute).
 */
final class KeyState {

    /** One thread's hold: reentrant count over one store entry. Touched only by its thread. */
    static final class Hold {

        final StoreEntry entry;

        final boolean passedGate;

        int count = 1;

        Hold(StoreEntry entry, boolean passedGate) {
            this.entry = entry;
            this.passedGate = passedGate;
        }
    }

    final String key;

    final ReentrantLock unfairGate = new ReentrantLock(false);

    final Map<Thread, Hold> holds = new ConcurrentHashMap<>(2);

    /** Entries of this process's acquisitions in progress, written or about to be. */
    final Set<StoreEntry> pending = ConcurrentHashMap.newKeySet(2);

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
