package io.github.distlock.etcd;

import java.util.ArrayDeque;
import java.util.Deque;

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

    private final Deque<Long> free = new ArrayDeque<>();

    private long issued;

    synchronized long take() {
        Long reused = this.free.pollFirst();
        return (reused != null) ? reused : ++this.issued;
    }

    synchronized void giveBack(long slot) {
        this.free.addFirst(slot);
    }
}
