package io.github.distlock.etcd;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sequence numbers for queue entry keys ({@code <root><lease>_<slot>}).
 *
 * <p>A number is handed out again only after etcd confirmed the entry that used it deleted, so
 * live entries of a lease stay unique (no two acquisitions ever share a key), while a lock's keys
 * stay as few as its concurrency. That matters to etcd: every deleted key leaves a tombstone in
 * its index until compaction, and the prefix read of each acquisition walks over the tombstones
 * under the lock. An entry whose write had an unknown outcome never gives its number back: it may
 * still appear, and is deleted by key alone.
 */
final class EntrySlots {

    /**
     * Guards the fields below. Not a monitor: every acquisition takes a slot, and contending
     * virtual threads would pin their carriers on a monitor on JDK 21 to 23.
     */
    private final ReentrantLock lock = new ReentrantLock();

    private final Deque<Long> free = new ArrayDeque<>();

    private long issued;

    long take() {
        this.lock.lock();
        try {
            Long reused = this.free.pollFirst();
            return (reused != null) ? reused : ++this.issued;
        }
        finally {
            this.lock.unlock();
        }
    }

    void giveBack(long slot) {
        this.lock.lock();
        try {
            this.free.addFirst(slot);
        }
        finally {
            this.lock.unlock();
        }
    }
}
