package io.github.distlock;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One lock over several keys (a transfer between two accounts, an order and its SKU): all of them
 * or none. Obtained with {@link LockRegistry#obtainAll}.
 *
 * <p>The keys are taken one by one in one canonical order, the same in every process (duplicates
 * collapsed, then {@link String#compareTo}): two callers that ask for the same keys in different
 * orders cannot deadlock, since each waits for a key only while holding keys that come before it
 * (as long as neither holds other keys of its own while it waits).
 * A timed attempt that cannot have every key within its timeout releases the ones it took, in
 * reverse order, and returns {@code false}; so does one that fails, before it throws. Each key keeps
 * its own fence ({@link #getFences()}), its own fairness and everything {@link FencedLock} promises:
 * reentrancy per thread, loss reporting, the bounds on waiting.
 */
public interface FencedMultiLock {

    /** The most keys one lock may cover. */
    int MAX_KEYS = 32;

    /** @return the keys in the order they are taken: duplicates collapsed, sorted */
    List<String> getKeys();

    /** @return whether waiters for each key are served in arrival order */
    boolean isFair();

    /**
     * Takes every key if each is free now, else none.
     * @return whether the current thread holds every key
     * @throws LockAcquisitionException if the store failed (no key is held then)
     */
    boolean tryLock();

    /**
     * Takes every key, waiting at most {@code time} for all of them together, else none.
     * @param time the longest wait for all keys; zero or less tries each key once
     * @param unit the unit of {@code time}
     * @return whether the current thread holds every key
     * @throws InterruptedException if interrupted while waiting (no key is held then)
     * @throws LockAcquisitionException if the store failed (no key is held then)
     */
    boolean tryLock(long time, TimeUnit unit) throws InterruptedException;

    /**
     * Takes every key, waiting as long as it takes.
     * @throws LockAcquisitionException if the store failed for longer than its request timeout
     * (no key is held then)
     */
    void lock();

    /**
     * Takes every key, waiting until done or interrupted.
     * @throws InterruptedException if interrupted while waiting (no key is held then)
     */
    void lockInterruptibly() throws InterruptedException;

    /**
     * Releases every key, in reverse order, also when one of them throws.
     * @throws LockLostException if any hold was lost meanwhile (other failures suppressed in it);
     * every key was released all the same
     * @throws IllegalMonitorStateException if the current thread does not hold every key (nothing
     * is released then)
     */
    void unlock();

    /** @return whether the current thread holds every key and none of the holds was lost */
    boolean isLockedByCurrentThread();

    /**
     * @return each key's fence, in the order of {@link #getKeys()}
     * @throws IllegalMonitorStateException if the current thread does not hold every key
     */
    Map<String, Long> getFences();
}
