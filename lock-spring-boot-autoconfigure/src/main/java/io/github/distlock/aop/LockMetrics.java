package io.github.distlock.aop;

/**
 * Receives what {@link DistributedLockInterceptor} measures of each
 * {@link io.github.distlock.annotation.DistributedLock @DistributedLock} call: how long it waited
 * for its lock and how long it held it. Every {@link #waited waited} with
 * {@link WaitOutcome#ACQUIRED} is followed by exactly one {@link #held held} on the same thread,
 * also for reentrant (nested) calls, which count as calls of their own.
 *
 * <p>Called on the calling thread for every locked call: implementations must be thread-safe and
 * cheap, and must not throw.
 */
public interface LockMetrics {

    /** Records nothing; what the interceptor uses when no metrics are configured. */
    LockMetrics NONE = new LockMetrics() {
    };

    /**
     * Records the end of a wait for a lock.
     * @param key the lock key (unbounded in general: not a safe meter tag as such)
     * @param fair whether the call waited fairly
     * @param outcome how the wait ended
     * @param nanos how long it took
     */
    default void waited(String key, boolean fair, WaitOutcome outcome, long nanos) {
    }

    /**
     * Records the end of a hold that a {@link WaitOutcome#ACQUIRED} wait started.
     * @param key the lock key
     * @param fair whether the lock was taken fairly
     * @param outcome how the hold ended
     * @param nanos how long the lock was held
     */
    default void held(String key, boolean fair, HoldOutcome outcome, long nanos) {
    }

    /** How a wait for a lock ended. */
    enum WaitOutcome {

        /** The lock was acquired. */
        ACQUIRED,

        /** The wait timeout passed while another owner held the lock. */
        TIMEOUT,

        /** The wait failed: the store failed, the thread was interrupted, or a reentered hold was lost. */
        ERROR
    }

    /** How a hold of a lock ended. */
    enum HoldOutcome {

        /** The call released the lock. */
        RELEASED,

        /** The lock was lost while the method ran. */
        LOST
    }
}
