package io.github.distlock.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;

/**
 * The one way a store that reads its locks key by key lists a namespace within a limit: locks
 * ordered by key, at most {@code maxEntries} entries in all (each lock's holder first), and
 * {@code truncated} when anything was left out.
 */
public final class LockListing {

    private LockListing() {
    }

    /**
     * Reads one lock of the listing.
     */
    @FunctionalInterface
    public interface LockReader {

        /**
         * @param key the lock key
         * @param maxEntries at most this many entries, oldest first
         * @return the lock as the store showed it
         * @throws StoreUnavailableException if the store failed or did not answer in time
         * @throws InterruptedException if the read was interrupted
         */
        LockSnapshot read(String key, int maxEntries) throws StoreUnavailableException, InterruptedException;
    }

    /**
     * @param namespace the namespace listed
     * @param lockKeys the keys of the namespace's locks, in any order
     * @param maxEntries at most this many entries in all
     * @param reader reads one lock
     * @return the locks with a holder, ordered by key
     * @throws StoreUnavailableException if a read failed
     * @throws InterruptedException if a read was interrupted
     */
    public static NamespaceSnapshot list(String namespace, Collection<String> lockKeys, int maxEntries,
            LockReader reader) throws StoreUnavailableException, InterruptedException {
        Map<String, LockSnapshot> locks = new TreeMap<>();
        boolean truncated = false;
        int left = maxEntries;
        for (String key : lockKeys) {
            if (left <= 0) {
                truncated = true;
                break;
            }
            // One more than left tells whether this lock had more.
            LockSnapshot lock = reader.read(key, Math.min(left, Integer.MAX_VALUE - 1) + 1);
            if (lock.holder() == null) {
                continue;
            }
            if (1 + lock.waiters().size() > left) {
                truncated = true;
                lock = new LockSnapshot(key, lock.holder(), lock.waiters().subList(0, left - 1));
            }
            locks.put(key, lock);
            left -= 1 + lock.waiters().size();
        }
        return new NamespaceSnapshot(namespace, 0, new ArrayList<>(locks.values()), truncated);
    }
}
