package io.github.distlock.core;

import java.util.concurrent.atomic.LongAdder;

import io.github.distlock.LockStatistics;
import io.github.distlock.store.StoreEvents;

/**
 * What counts into one registry's {@link LockStatistics}: held by the registry's core, and by its
 * store as {@link StoreEvents}, so that the totals a registry shows ({@link #statistics()}) can be
 * read but not changed by its users. Counting costs one uncontended {@link LongAdder} increment
 * per event.
 */
public final class LockCounters implements StoreEvents {

    private final LongAdder acquired = new LongAdder();

    private final LongAdder localHandoffs = new LongAdder();

    private final LongAdder timedOut = new LongAdder();

    private final LongAdder failed = new LongAdder();

    private final LongAdder holdsLost = new LongAdder();

    private final LongAdder keptEntriesLost = new LongAdder();

    private final LongAdder sessionsLost = new LongAdder();

    private final LongAdder backendErrors = new LongAdder();

    private final LockStatistics statistics = new Totals();

    /** @return the read-only totals these counters count into */
    public LockStatistics statistics() {
        return this.statistics;
    }

    /** Counts an acquisition that took a lock. */
    public void acquired() {
        this.acquired.increment();
    }

    /** An acquisition took over an entry the process owned, without a store round trip; counted as acquired too. */
    public void localHandoff() {
        this.acquired.increment();
        this.localHandoffs.increment();
    }

    /** Counts an acquisition whose wait ended while the lock was taken. */
    public void timedOut() {
        this.timedOut.increment();
    }

    /** Counts an acquisition that failed with a {@link io.github.distlock.LockAcquisitionException}. */
    public void failed() {
        this.failed.increment();
    }

    /** Counts a hold that ended without its holder's unlock. */
    public void holdLost() {
        this.holdsLost.increment();
    }

    /** @param holds how many holds a loss struck after their unlock */
    void holdsLost(int holds) {
        this.holdsLost.add(holds);
    }

    /** Counts an entry kept between holds that ended while no thread held it, without its release. */
    public void keptEntryLost() {
        this.keptEntriesLost.increment();
    }

    @Override
    public void sessionLost() {
        this.sessionsLost.increment();
    }

    @Override
    public void backendError() {
        this.backendErrors.increment();
    }

    /** The view users get: a class of its own, so that it cannot be cast back to the counters. */
    private final class Totals implements LockStatistics {

        @Override
        public long getAcquired() {
            return LockCounters.this.acquired.sum();
        }

        @Override
        public long getLocalHandoffs() {
            return LockCounters.this.localHandoffs.sum();
        }

        @Override
        public long getTimedOut() {
            return LockCounters.this.timedOut.sum();
        }

        @Override
        public long getFailed() {
            return LockCounters.this.failed.sum();
        }

        @Override
        public long getHoldsLost() {
            return LockCounters.this.holdsLost.sum();
        }

        @Override
        public long getKeptEntriesLost() {
            return LockCounters.this.keptEntriesLost.sum();
        }

        @Override
        public long getSessionsLost() {
            return LockCounters.this.sessionsLost.sum();
        }

        @Override
        public long getBackendErrors() {
            return LockCounters.this.backendErrors.sum();
        }
    }
}
