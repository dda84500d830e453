package io.github.distlock;

import java.util.Collection;

/**
 * Hands out {@link FencedLock}s by key.
 *
 * <p>The key is the lock's identity: every {@code FencedLock} obtained for the same key, fair or
 * unfair, from any registry that shares the same backend, excludes every other. {@code fair} only
 * says how a caller waits: fair callers are served in the order they started waiting, unfair
 * callers may take a free lock ahead of queued fair ones.
 *
 * <p>Obtaining a lock is cheap and does not talk to the backend; lock objects may be cached or
 * obtained per call. Implementations are thread-safe; one registry per application is typical.
 */
public interface LockRegistry {

    /**
     * Returns an unfair lock for {@code key}.
     * @param key any non-empty string up to the store's size limit (see the README's guarantees)
     * @return the lock
     * @throws IllegalArgumentException if {@code key} is null, empty or over the store's size limit;
     * nothing was sent to the store then
     */
    FencedLock obtain(String key);

    /**
     * Returns a lock for {@code key} that waits fairly (first come, first served) or not.
     * @param key any non-empty string up to the store's size limit (see the README's guarantees)
     * @param fair whether waiters are served in arrival order
     * @return the lock
     * @throws IllegalArgumentException if {@code key} is null, empty or over the store's size limit;
     * nothing was sent to the store then
     */
    FencedLock obtain(String key, boolean fair);

    /**
     * Returns one lock over several keys: all or none, taken in one canonical order so that callers
     * asking for the same keys in different orders cannot deadlock (see {@link FencedMultiLock}).
     * @param keys the keys, at most {@link FencedMultiLock#MAX_KEYS} once duplicates are collapsed;
     * each as {@link #obtain(String, boolean)} takes it
     * @param fair whether waiters for each key are served in arrival order
     * @return the lock
     * @throws IllegalArgumentException if there is no key, a key is invalid, or there are too many;
     * nothing was sent to the store then
     */
    default FencedMultiLock obtainAll(Collection<String> keys, boolean fair) {
        return new OrderedMultiLock(this, keys, fair);
    }
}
