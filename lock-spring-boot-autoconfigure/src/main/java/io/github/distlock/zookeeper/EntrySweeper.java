package io.github.distlock.zookeeper;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Finds the entries of one store that no acquisition answers for, so that they are deleted rather
 * than block their lock for as long as the session lives. A create whose answer a connection loss
 * took can leave one (ZooKeeper applied it; Curator's protection then looked for it on a member
 * that had not applied it yet, and created another), and so can a call whose answer never comes
 * at all, which Curator 5.9 was seen to do across a leader loss.
 *
 * <p>Invariants: an entry node of this store is either {@linkplain #isOwned owned} or wanted gone
 * (a node whose own delete was answered is neither, and is not swept either);
 * a created node is owned before its create stops being pending, so a node read while none of its
 * lock's creates is pending afterwards is owned if its create was answered. Nothing waits on an
 * answer forever: a create or delete still pending after {@link #staleNanos} is dropped, and its
 * lock becomes suspect (its queue is read and swept until a clean read, a settling time after the
 * last reason for suspicion).
 */
final class EntrySweeper {

    private record Pending(String key, long sentAt) {
    }

    private final String tag;

    private final long staleNanos;

    private final AtomicLong tokens = new AtomicLong();

    /** Entry nodes whose create was answered and that are not wanted gone yet. */
    private final Set<String> owned = ConcurrentHashMap.newKeySet();

    private final Map<Long, Pending> pendingCreates = new ConcurrentHashMap<>();

    /** Owned nodes being deleted, by path. */
    private final Map<String, Pending> pendingDeletes = new ConcurrentHashMap<>();

    /**
     * Owned nodes whose delete was answered, with when: a queue read sent before that answer may
     * still list them, and they are nobody's orphans. Kept for {@link #staleNanos}, beyond every
     * wait on such a read.
     */
    private final Map<String, Long> deleted = new ConcurrentHashMap<>();

    /** Locks that may hold an entry no acquisition answers for, with when that became possible. */
    private final Map<String, Long> suspects = new ConcurrentHashMap<>();

    /** Suspect locks whose queue is being read, with when the read was sent. */
    private final Map<String, Long> reading = new ConcurrentHashMap<>();

    /**
     * @param tag the mark in this store's entry names
     * @param staleNanos how long an unanswered call may still be answered in time: beyond every
     * wait on it
     */
    EntrySweeper(String tag, long staleNanos) {
        this.tag = tag;
        this.staleNanos = staleNanos;
    }

    String tag() {
        return this.tag;
    }

    /** @return a token for {@link #createEnded} */
    long createStarted(String key) {
        long token = this.tokens.incrementAndGet();
        this.pendingCreates.put(token, new Pending(key, System.nanoTime()));
        return token;
    }

    /**
     * @param createdPath the node the create answered with, or {@code null} if it answered with an error
     * @param suspicious whether the answer may hide another node: an error, or a connection change
     * while it was pending
     */
    void createEnded(long token, String key, @Nullable String createdPath, boolean suspicious) {
        if (createdPath != null) {
            this.owned.add(createdPath);
        }
        if (suspicious) {
            suspect(key);
        }
        // After owning: see the class invariant.
        this.pendingCreates.remove(token);
    }

    void deleteStarted(String key, String path) {
        if (this.owned.contains(path)) {
            this.pendingDeletes.put(path, new Pending(key, System.nanoTime()));
        }
    }

    void deleteEnded(String path) {
        this.pendingDeletes.remove(path);
        // Remembered before it stops being owned, so that a sweep sees it as one or the other.
        if (this.owned.contains(path)) {
            this.deleted.put(path, System.nanoTime());
        }
        this.owned.remove(path);
    }

    void suspect(String key) {
        this.suspects.put(key, System.nanoTime());
    }

    boolean isOwned(String path) {
        return this.owned.contains(path);
    }

    boolean isCreatePending(String key) {
        for (Pending pending : this.pendingCreates.values()) {
            if (pending.key().equals(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param lockNode the lock's node
     * @param entries the lock node's children, read before this call
     * @param delete deletes a node that is not owned
     * @return how many were deleted; none while a create of the lock is pending
     */
    int sweep(String key, String lockNode, List<String> entries, Consumer<String> delete) {
        if (isCreatePending(key)) {
            return 0;
        }
        int deleted = 0;
        for (String child : entries) {
            String path = lockNode + "/" + child;
            if (ZookeeperKeyspace.isTaggedEntry(child, this.tag) && !this.owned.contains(path)
                    && !this.deleted.containsKey(path)) {
                delete.accept(path);
                deleted++;
            }
        }
        return deleted;
    }

    /** Drops calls pending for too long, making their locks suspect; a delete's node is no longer owned. */
    void expireStaleCalls() {
        long now = System.nanoTime();
        this.pendingCreates.entrySet().removeIf(pending -> {
            boolean stale = now - pending.getValue().sentAt() >= this.staleNanos;
            if (stale) {
                suspect(pending.getValue().key());
            }
            return stale;
        });
        this.pendingDeletes.entrySet().removeIf(pending -> {
            boolean stale = now - pending.getValue().sentAt() >= this.staleNanos;
            if (stale) {
                this.owned.remove(pending.getKey());
                suspect(pending.getValue().key());
            }
            return stale;
        });
        this.reading.values().removeIf(sentAt -> now - sentAt >= this.staleNanos);
        this.deleted.values().removeIf(deletedAt -> now - deletedAt >= this.staleNanos);
    }

    /** A suspect lock whose queue to read now. */
    interface QueueReader {

        /**
         * Reads the lock's queue without blocking and, once answered, calls {@code done} with
         * whether the read left the queue clean of orphans (false if the read failed).
         */
        void read(String key, Consumer<Boolean> done);
    }

    /**
     * Reads the queue of every suspect lock that is not being read already; a lock stops being
     * suspect after a clean read sent {@code settleNanos} after its last suspicion.
     */
    void sweepSuspects(long settleNanos, QueueReader reader) {
        for (Map.Entry<String, Long> suspect : this.suspects.entrySet()) {
            String key = suspect.getKey();
            long since = suspect.getValue();
            long readAt = System.nanoTime();
            if (this.reading.putIfAbsent(key, readAt) != null) {
                continue;
            }
            reader.read(key, clean -> {
                this.reading.remove(key, readAt);
                if (clean && readAt - since >= settleNanos) {
                    this.suspects.remove(key, since);
                }
            });
        }
    }

    boolean isSuspect(String key) {
        return this.suspects.containsKey(key);
    }
}
