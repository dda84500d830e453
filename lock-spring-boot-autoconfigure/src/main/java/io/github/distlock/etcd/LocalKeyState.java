package io.github.distlock.etcd;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.ByteSequence;

/**
 * What one process knows about one key: which of its threads hold it, and the local gate that
 * unfair acquirers pass first so that one process has at most one unfair entry per key in etcd.
 *
 * <p>A thread can have a hold here while another thread of the process holds the key in etcd only
 * when the first hold was lost (its lease ended) and not unlocked yet; holds are therefore kept
 * per thread. The state is shared by every lock object of the key and removed from the registry
 * when no thread uses it ({@link #users}, guarded by the registry map's compute).
 */
final class LocalKeyState {

    /** One thread's hold: reentrant count over one etcd queue entry. Touched only by its thread. */
    static final class Hold {

        final QueueEntry entry;

        final boolean passedGate;

        int count = 1;

        Hold(QueueEntry entry, boolean passedGate) {
            this.entry = entry;
            this.passedGate = passedGate;
        }
    }

    final String key;

    final ByteSequence root;

    final ReentrantLock unfairGate = new ReentrantLock(false);

    final Map<Thread, Hold> holds = new ConcurrentHashMap<>(2);

    int users;

    LocalKeyState(String key, ByteSequence root) {
        this.key = key;
        this.root = root;
    }

    Hold holdOf(Thread thread) {
        return this.holds.get(thread);
    }

    boolean heldByAnyThread() {
        for (Hold hold : this.holds.values()) {
            if (hold.entry.lostReason() == null) {
                return true;
            }
        }
        return false;
    }
}
