package io.github.distlock;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One lock as its store showed it in one read: who holds it and who is queued behind, oldest
 * first. Read by {@link InspectableLockRegistry#describeLock(String, int)} and
 * {@link InspectableLockRegistry#describeLocks(int)}; the entries may belong to any process.
 *
 * @param key the lock key
 * @param holder the entry that owns the lock (the oldest), or {@code null} if the lock is free
 * @param waiters the entries queued behind the holder, in the order they will be served
 */
public record LockSnapshot(String key, @Nullable Entry holder, List<Entry> waiters) {

    /**
     * Creates a snapshot.
     * @param key the lock key
     * @param holder the owning entry, or {@code null}
     * @param waiters the queued entries, oldest first
     */
    public LockSnapshot {
        waiters = List.copyOf(waiters);
    }

    /**
     * One entry of a lock's queue.
     *
     * @param owner owner identity of the registry that wrote it (for example
     * {@code orders@host-1:4242})
     * @param thread name of the thread that asked for the lock, or {@code null} if not recorded
     * @param fence the fence of the hold it is or will become (for etcd: the entry's create revision)
     * @param queuedAt when the entry was written, by the writer's clock: for the holder, when it
     * asked for the lock (it holds it since then, or since its predecessor released it), or
     * {@code null} if not recorded
     * @param leaseId the session (lease) the entry is attached to, as the store's tools show it
     * (for etcd: the lease id in hex)
     * @param leaseTimeToLive how long the lease lives without another renewal (for etcd: whole
     * seconds, as etcd reports them), or {@code null} if it just expired or the store has no
     * lease
     */
    public record Entry(String owner, @Nullable String thread, long fence, @Nullable Instant queuedAt,
            String leaseId, @Nullable Duration leaseTimeToLive) {

        /** @return {@code owner/thread}, or the owner alone if no thread is recorded: how errors name a holder */
        public String describe() {
            return describe(this.owner, this.thread);
        }

        /**
         * How every store, error and tool names a holder or waiter.
         * @param owner the owner identity of its process
         * @param thread the name of its thread, or {@code null} if not recorded
         * @return {@code owner/thread}, or the owner alone
         */
        public static String describe(String owner, @Nullable String thread) {
            return (thread != null) ? owner + '/' + thread : owner;
        }
    }
}
