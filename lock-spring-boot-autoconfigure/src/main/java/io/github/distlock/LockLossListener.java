package io.github.distlock;

/**
 * Told of every hold of a registry that its store may have stopped backing before it ended (see
 * {@link LockLoss}): a lease that expired, an entry deleted behind the registry's back, a
 * failover or restore that lost it, a release the store did not confirm. Register with
 * {@link InspectableLockRegistry#addLossListener}; with the starter, every bean of this type is
 * registered with every {@link InspectableLockRegistry} bean.
 *
 * <p>Called on one thread of the registry's own, one report after another in the order the
 * registry learnt of them, shortly after it did: a listener may use the registry (its locks
 * included), but one that blocks delays the reports after it. An exception is logged and does not
 * reach the other listeners.
 */
@FunctionalInterface
public interface LockLossListener {

    /**
     * @param loss the lost holds of one lock
     */
    void lockLost(LockLoss loss);
}
