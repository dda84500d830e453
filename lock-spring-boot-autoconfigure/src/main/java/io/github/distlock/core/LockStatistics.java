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

    private final LongAdder localHandoffs = new LongAdder();

    private final LongAdder timedOut = new LongAdder();

    private final LongAdder failed = new LongAdder();

    private final LongAdder holdsLost = new LongAdder();

    private final LongAdder keptEntriesLost = new LongAdder();

    private final LongAdder sessionsLost = new LongAdder();

    private final LongAdder backendErrors = new LongAdder();

    private LockStatistics() {
    }

    /** @return acquisitions that took a lock (reentrant acquisitions of a held lock not counted) */
    public long getAcquired() {
        return this.acquired.sum();
    }

    /**
     * @return acquisitions, among {@link #getAcquired()}, that took over an unfair store entry
     * this process already owned (a local handoff or a lingering entry), without a store round trip
     */
    public long getLocalHandoffs() {
        return this.localHandoffs.sum();
    }

    /** @return acquisitions that gave up because their wait timeout passed while the lock was taken */
    public long getTimedOut() {
        return this.timedOut.sum();
    }

    /** @return acquisitions that failed with a {@link io.github.distlock.LockAcquisitionException} */
    public long getFailed() {
        return this.failed.sum();
    }

    /**
     * @return holds that the store stopped backing before their unlock (lease lost, entry deleted,
     * lost in a failover), as reported to {@link io.github.distlock.LockLossListener}s: those held
     * when the loss was reported, and those passed on between this process's threads and unlocked
     * after the store last confirmed their entry
     */
    public long getHoldsLost() {
        return this.holdsLost.sum();
    }

    /**
     * @return unfair store entries that this process kept between the holds of its threads (a local
     * handoff or a linger, see {@link io.github.distlock.LocalHandoff}) and that ended while no
     * thread held them, without their release: deleted from the store behind the registry's back,
     * lost in a failover, or lost with the session. The holds passed on it that the loss may have
     * struck count among {@link #getHoldsLost()}; the entry counts here.
     */
    public long getKeptEntriesLost() {
        return this.keptEntriesLost.sum();
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

    /**
     * Starts the totals of a new registry.
     * @return the recorder that counts; its {@link Recorder#statistics()} is what the registry shows
     */
    public static Recorder recorder() {
        return new Recorder(new LockStatistics());
    }

    /**
     * What counts into one {@link LockStatistics}: held by the registry's core and store only, so
     * that the totals a registry shows can be read but not changed by its users.
     */
    public static final class Recorder {

        private final LockStatistics statistics;

        private Recorder(LockStatistics statistics) {
            this.statistics = statistics;
        }

        /** @return the totals this recorder counts into */
        public LockStatistics statistics() {
            return this.statistics;
        }

        /** Counts an acquisition that took a lock. */
        public void acquired() {
            this.statistics.acquired.increment();
        }

        /** An acquisition took over an entry the process owned, without a store round trip; counted as acquired too. */
        public void localHandoff() {
            this.statistics.acquired.increment();
            this.statistics.localHandoffs.increment();
        }

        /** Counts an acquisition whose wait ended while the lock was taken. */
        public void timedOut() {
            this.statistics.timedOut.increment();
        }

        /** Counts an acquisition that failed with a {@link io.github.distlock.LockAcquisitionException}. */
        public void failed() {
            this.statistics.failed.increment();
        }

        /** Counts a hold that ended without its holder's unlock. */
        public void holdLost() {
            this.statistics.holdsLost.increment();
        }

        /** @param holds how many holds a loss struck after their unlock */
        void holdsLost(int holds) {
            this.statistics.holdsLost.add(holds);
        }

        /** Counts an entry kept between holds that ended while no thread held it, without its release. */
        public void keptEntryLost() {
            this.statistics.keptEntriesLost.increment();
        }

        /** Counts a session lost. */
        public void sessionLost() {
            this.statistics.sessionsLost.increment();
        }

        /** Counts a store request that failed or timed out. */
        public void backendError() {
            this.statistics.backendErrors.increment();
        }
    }
}
