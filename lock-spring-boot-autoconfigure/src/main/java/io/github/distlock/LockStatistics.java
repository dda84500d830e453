package io.github.distlock;

/**
 * Running totals of one lock registry, counted since it was built, for metrics:
 * {@code io.github.distlock.metrics.LockRegistryMetrics} publishes them as Micrometer meters.
 * The registry's core counts acquisitions and losses, its store sessions and errors; users can
 * read the totals, not change them.
 */
public interface LockStatistics {

    /** @return acquisitions that took a lock (reentrant acquisitions of a held lock not counted) */
    long getAcquired();

    /**
     * @return acquisitions, among {@link #getAcquired()}, that took over an unfair store entry
     * this process already owned (a local handoff or a lingering entry), without a store round trip
     */
    long getLocalHandoffs();

    /** @return acquisitions that gave up because their wait timeout passed while the lock was taken */
    long getTimedOut();

    /** @return acquisitions that failed with a {@link LockAcquisitionException} */
    long getFailed();

    /**
     * @return holds that the store stopped backing before their unlock (lease lost, entry deleted,
     * lost in a failover), as reported to {@link LockLossListener}s: those held
     * when the loss was reported, and those passed on between this process's threads and unlocked
     * after the store last confirmed their entry
     */
    long getHoldsLost();

    /**
     * @return unfair store entries that this process kept between the holds of its threads (a local
     * handoff or a linger, see {@link LocalHandoff}) and that ended while no
     * thread held them, without their release: deleted from the store behind the registry's back,
     * lost in a failover, or lost with the session. The holds passed on it that the loss may have
     * struck count among {@link #getHoldsLost()}; the entry counts here.
     */
    long getKeptEntriesLost();

    /**
     * @return store sessions lost: an etcd lease, a Redis session key or a database session row not
     * renewed within its TTL, a ZooKeeper session expired, or a session the store ended otherwise
     */
    long getSessionsLost();

    /**
     * @return store requests that failed or timed out: acquisitions, releases, keep-alives and
     * background deletes
     */
    long getBackendErrors();
}
