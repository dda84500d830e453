package io.github.distlock;

import java.time.Duration;
import java.util.Objects;

/**
 * How a process shares a hot unfair lock among its own threads without store round trips. Fair
 * locks never take part: they keep strict arrival order across processes.
 * <ul>
 * <li><b>Passes.</b> When a thread unlocks an unfair lock while another thread of the same process
 * waits for it unfairly, the store entry is passed to that thread without a round trip, at most
 * {@value io.github.distlock.core.Fences#MAX_PASS} times per store acquisition, and, once an
 * entry of another process (or a fair waiter of this one) may be queued behind, for at most
 * {@link #window()} after that was first seen; then the entry goes back to the store and the
 * other processes get their turn. Stores that cannot tell when an entry is queued behind without
 * a round trip count the window from the store acquisition.</li>
 * <li><b>Linger.</b> After the last unlock with no thread of the process waiting, the process
 * keeps the entry for {@link #linger()}, so that its next acquisition of the key costs no round
 * trip. The entry goes back to the store when the linger ends, or at once when the store reports
 * another entry queued behind it. Only stores that report that without a round trip linger
 * (etcd, Redis, ZooKeeper, PostgreSQL and the in-memory store; not MySQL, MariaDB or H2, where the
 * linger has no effect; on PostgreSQL only registries that linger tell each other, so give every
 * process the same linger). While an entry
 * lingers, other processes see the lock as held: their {@code tryLock()} without a timeout fails
 * and {@code isLocked()} is true, as if the last holder were still running.</li>
 * </ul>
 * Every pass gets its own fence, greater than the previous one (see
 * {@link io.github.distlock.core.Fences}). Entries go back to the store on at most 16 threads per
 * registry, in the order they became due: while the store stalls, one due later waits for those
 * before it.
 *
 * @param window how long local passes go on once others may be waiting; {@link Duration#ZERO}
 * turns passes off
 * @param linger how long an unused entry is kept; {@link Duration#ZERO} turns lingering off
 */
public record LocalHandoff(Duration window, Duration linger) {

    /** Passes for up to 10 ms while others wait; no linger. */
    public static final LocalHandoff DEFAULT = new LocalHandoff(Duration.ofMillis(10), Duration.ZERO);

    /** Every unfair acquisition goes to the store, as fair ones do. */
    public static final LocalHandoff DISABLED = new LocalHandoff(Duration.ZERO, Duration.ZERO);

    /**
     * Checks both durations.
     * @param window the pass window, zero or positive
     * @param linger the linger, zero or positive
     * @throws IllegalArgumentException naming the value that is negative or null
     */
    public LocalHandoff {
        check("window", window);
        check("linger", linger);
    }

    private static void check(String name, Duration value) {
        Objects.requireNonNull(value, () -> "Local handoff " + name + " must not be null");
        if (value.isNegative()) {
            throw new IllegalArgumentException("Local handoff " + name + " must not be negative, but was " + value);
        }
    }

    /** @return whether passes are on */
    public boolean passes() {
        return !this.window.isZero();
    }

    /** @return whether lingering is on */
    public boolean lingers() {
        return !this.linger.isZero();
    }
}
