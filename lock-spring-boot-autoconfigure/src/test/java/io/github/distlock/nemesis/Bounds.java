package io.github.distlock.nemesis;

import java.time.Duration;

/**
 * The bounds that the {@link Checker}'s rules hold a run to; the runner sets them per store.
 *
 * @param ttl the lease TTL (or session timeout) that the store granted: how long a dead or cut-off
 * holder may keep a key
 * @param election how long the store takes to serve again after a member's loss or a heal (a
 * leader election, a Sentinel failover, a database restart); with {@code ttl}, the recovery bound
 * @param waitOverrun how far past its timeout a timed call may answer (G10)
 * @param lossReport how soon, in the holder's own running time, a process reports a hold that it
 * lost: after another process was granted the key during a fault, after a write of the hold was
 * rejected, or after its unlock threw {@code LockLostException}
 * @param fairnessSlack how close two fair requests may start and still reach the store in either
 * order (a request is recorded before the call sends it), and how late a timed-out waiter's answer
 * may be recorded after its deadline
 * @param fencesSurviveDataLoss whether fences must keep increasing across a fault that loses store
 * data too (G12 for a store that promises it); if false, fences may restart after such a fault
 */
public record Bounds(Duration ttl, Duration election, Duration waitOverrun, Duration lossReport,
        Duration fairnessSlack, boolean fencesSurviveDataLoss) {

    public Bounds {
        for (Duration bound : new Duration[] { ttl, election, waitOverrun, lossReport, fairnessSlack }) {
            if (bound == null || bound.isNegative()) {
                throw new IllegalArgumentException("bounds must be zero or positive durations: " + bound);
            }
        }
    }

    /** @return the longest time a key may go without a grant after the last fault healed */
    public Duration recovery() {
        return this.ttl.plus(this.election);
    }
}
