package io.github.distlock;

import java.util.List;

/**
 * Every lock with a holder or a waiter under a registry's namespace, read by
 * {@link InspectableLockRegistry#describeLocks(int)}.
 *
 * @param namespace the namespace read
 * @param revision the store's revision at the read (for etcd: the etcd revision), or 0 if the
 * store has none
 * @param locks the locks, ordered by key
 * @param truncated whether the namespace held more entries than the read's limit, so that some
 * locks or some of their waiters are missing
 */
public record NamespaceSnapshot(String namespace, long revision, List<LockSnapshot> locks, boolean truncated) {

    /**
     * Creates a snapshot.
     * @param namespace the namespace read
     * @param revision the revision of the read
     * @param locks the locks, ordered by key
     * @param truncated whether entries were left out
     */
    public NamespaceSnapshot {
        locks = List.copyOf(locks);
    }
}
