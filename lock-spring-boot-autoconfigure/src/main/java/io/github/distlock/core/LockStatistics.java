package io.github.distlock.core;

import java.util.concurrent.atomic.LongAdder;

/**
 * Running totals of one lock registry, counted since it was built, for metrics:
 * {@code io.github.distlock.metrics.LockRegistryMetrics} publishes them as Micrometer
 * meters. The core counts acquisitions and losses, the store its sessions and errors. Counting
 * costs one uncontended {@link LongAdder} increment per event.
 */
public final class LockStatistics {

    private final LongAdder acquired = new LongAdder();

    private final LongAdder timedOut = new LongAdder();

    private final LongAdder failed = new LongAdder();

    private final LongAdder holdsLost = new LongAdder();

    private final LongAdder sessionsLost = new LongAdder();

    private final LongAdder backendErrors = new LongAdder();

    /** Starts every total at zero. */
    public LockStatistics() {
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

    /** @return sessions lost: for etcd, leases whose keep-alive etcd did not acknowledge within the TTL */
    public long getSessionsLost() {
        return this.sessionsLost.sum();
    }

    /**
     * @return store requests that failed or timed out: acquisitions, releases, keep-alives and
     * background deletes
     */
    public long getBackendErrors() {
        return this.backendErrors.sum();
    }

    /** Counts one more. */
    public void acquired() {
        this.acquired.increment();
    }

    /** Counts one more. */
    public void timedOut() {
        this.timedOut.increment();
    }

    /** Counts one more. */
    public void failed() {
        this.failed.increment();
    }

    /** Counts one more. */
    public void holdLost() {
        this.holdsLost.increment();
    }

    /** Counts one more. */
    public void sessionLost() {
        this.sessionsLost.increment();
    }

    /** Counts one more. */
    public void backendError() {
        this.backendErrors.increment();
    }
}
