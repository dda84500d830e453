package io.github.distlock.annotation;

/**
 * How a {@link DistributedLock @DistributedLock} call reports that its lock was lost while the
 * method ran (the hold ended without unlock, for example because the session lease expired).
 * Either way the loss is published as an {@link io.github.distlock.aop.LockLostEvent}; if the
 * method itself threw, its exception is rethrown with the loss added as a suppressed exception.
 */
public enum OnLockLost {

    /**
     * Throw the {@link io.github.distlock.LockLostException} after the method returned, instead of
     * its result.
     */
    FAIL,

    /** Log the loss at WARN and return the method's result. */
    WARN
}
