package io.github.distlock.testsupport;

import io.github.distlock.FencedLock;

/** One-line lock attempts that tests of several stores make. */
public final class LockAttempts {

    private LockAttempts() {
    }

    /**
     * Tries {@code lock} once, without waiting, and releases it at once if that got it.
     * @return whether the lock was free to the calling thread
     */
    public static boolean tryAndRelease(FencedLock lock) {
        if (!lock.tryLock()) {
            return false;
        }
        lock.unlock();
        return true;
    }
}
