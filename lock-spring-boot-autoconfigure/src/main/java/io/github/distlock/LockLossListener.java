package io.github.distlock;

/**
 * Told of every hold of a registry that its store may have stopped backing before it ended (see
 * {@link LockLoss}): a lease that expired, an entry deleted behind the registry's back, a
 * failover or restore that lost it. Register with
 * {@link InspectableLockRegistry#addLossListener}; with the starter, every bean of this type is
 * registered with the auto-configured registry.
 *
 * <p>Called on the thread that learnt of the loss: a store's I/O or renewal thread, or an
 * application thread in {@code lock()} or {@code unlock()}. Return quickly and do not block or
 * lock; an exception is logged and does not reach the other listeners or the caller.
 */
@FunctionalInterface
public interface LockLossListener {

    /**
     * @param loss the lost holds of one lock
     */
    void lockLost(LockLoss loss);
}
