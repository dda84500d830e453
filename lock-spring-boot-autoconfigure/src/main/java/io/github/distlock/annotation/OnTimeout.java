package io.github.distlock.annotation;

/**
 * What a {@link DistributedLock @DistributedLock} call does when the lock is still held by
 * someone else after its wait timeout.
 */
public enum OnTimeout {

    /**
     * Throw {@link io.github.distlock.LockAcquisitionException}, naming the key, how long the call
     * waited and, where known, the current holder. The method does not run.
     */
    FAIL,

    /**
     * Skip the call quietly: the method does not run and the call returns {@code null} (for
     * {@code void} and {@code Void} methods) or {@link java.util.Optional#empty()} (for methods
     * returning {@code Optional}). Other return types are rejected at start-up. Meant for
     * {@code @Scheduled} jobs that should run on one instance only. A backend failure while
     * acquiring skips the call too, since it cannot run safely without the lock: one warning is
     * logged when such an outage starts for the method and one line when the backend answers
     * again, without a stack trace on every run. An interrupt still throws
     * {@link io.github.distlock.LockAcquisitionException}.
     */
    SKIP
}
