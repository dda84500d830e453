package io.github.distlock.etcd;

import java.util.concurrent.atomic.LongAdder;

/**
 * Running totals of one {@link EtcdLockRegistry}, counted since it was built, for metrics:
 * {@code io.github.distlock.metrics.EtcdLockRegistryMetrics} publishes them as Micrometer
 * meters. Counting costs one uncontended {@link LongAdder} increment per event.
 */
public final class EtcdLockStatistics {

    private final LongAdder acquired = new LongAdder();

    private final LongAdder timedOut = new LongAdder();

    private final LongAdder failed = new LongAdder();

    private final LongAdder holdsLost = new LongAdder();

    private final LongAdder sessionsLost = new LongAdder();

    private final LongAdder backendErrors = new LongAdder();

    EtcdLockStatistics() {
    }

    /** @return acquisitions that took a lock (reentrant acquisitions of a held lock not counted) */
    public long getAcquired() {
        return this.acquired.sum();
    }

    /** @return acquisitions that gave up because their wait timeout passed while the lock was taken */
    public long getTimedOut() {
        return this.timedOut.sum();
    }

    /** @return acquisitions that failed with a {@link io.github.distlock.LockAcquisitionException} */
    public long getFailed() {
        return this.failed.sum();
    }

    /** @return holds that ended without their holder's unlock: lease lost or entry deleted */
    public long getHoldsLost() {
        return this.holdsLost.sum();
    }

    /** @return session leases lost because etcd did not acknowledge a keep-alive within the TTL */
    public long getSessionsLost() {
        return this.sessionsLost.sum();
    }

    /**
     * @return etcd requests that failed or timed out: acquisitions, releases, keep-alives and
     * background deletes
     */
    public long getBackendErrors() {
        return this.backendErrors.sum();
    }

    void acquired() {
        this.acquired.increment();
    }

    void timedOut() {
        this.timedOut.increment();
    }

    void failed() {
        this.failed.increment();
    }

    void holdLost() {
        this.holdsLost.increment();
    }

    void sessionLost() {
        this.sessionsLost.increment();
    }

    void backendError() {
        this.backendErrors.increment();
    }
}
