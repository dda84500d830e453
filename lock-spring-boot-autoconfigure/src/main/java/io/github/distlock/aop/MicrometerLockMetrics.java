package io.github.distlock.aop;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * {@link LockMetrics} as Micrometer meters:
 * <ul>
 * <li>{@code distributed.lock.wait}: timer of waits for a lock, tagged {@code outcome}
 * ({@code acquired}, {@code timeout}, {@code error}) and {@code fair} ({@code true},
 * {@code false});</li>
 * <li>{@code distributed.lock.held}: timer of holds, tagged {@code outcome} ({@code released},
 * {@code lost}) and {@code fair};</li>
 * <li>{@code distributed.lock.lost}: counter of holds lost while the method ran;</li>
 * <li>{@code distributed.lock.active}: gauge of calls holding a lock right now (a nested call on
 * the same key counts again).</li>
 * </ul>
 * Lock keys are not tags: they are unbounded (often one per entity) and would make a time series
 * each.
 */
public final class MicrometerLockMetrics implements LockMetrics {

    private static final String WAIT = "distributed.lock.wait";

    private static final String HELD = "distributed.lock.held";

    private static final String LOST = "distributed.lock.lost";

    private static final String ACTIVE = "distributed.lock.active";

    private static final String WAIT_DESCRIPTION = "Time spent waiting for a distributed lock";

    private static final String HELD_DESCRIPTION = "Time a distributed lock was held";

    // Every tag combination is known up front, so the meters are registered once rather than
    // looked up on each call.
    private final Map<WaitOutcome, Timer> fairWaits = new EnumMap<>(WaitOutcome.class);

    private final Map<WaitOutcome, Timer> unfairWaits = new EnumMap<>(WaitOutcome.class);

    private final Map<HoldOutcome, Timer> fairHolds = new EnumMap<>(HoldOutcome.class);

    private final Map<HoldOutcome, Timer> unfairHolds = new EnumMap<>(HoldOutcome.class);

    private final Counter lost;

    private final AtomicInteger active = new AtomicInteger();

    /**
     * Registers the meters.
     * @param registry where to register them
     */
    public MicrometerLockMetrics(MeterRegistry registry) {
        for (WaitOutcome outcome : WaitOutcome.values()) {
            this.fairWaits.put(outcome, timer(registry, WAIT, WAIT_DESCRIPTION, outcome, true));
            this.unfairWaits.put(outcome, timer(registry, WAIT, WAIT_DESCRIPTION, outcome, false));
        }
        for (HoldOutcome outcome : HoldOutcome.values()) {
            this.fairHolds.put(outcome, timer(registry, HELD, HELD_DESCRIPTION, outcome, true));
            this.unfairHolds.put(outcome, timer(registry, HELD, HELD_DESCRIPTION, outcome, false));
        }
        this.lost = Counter.builder(LOST)
            .description("Distributed locks lost while the locked method ran")
            .register(registry);
        Gauge.builder(ACTIVE, this.active, AtomicInteger::get)
            .description("Calls currently holding a distributed lock")
            .strongReference(true)
            .register(registry);
    }

    private static Timer timer(MeterRegistry registry, String name, String description, Enum<?> outcome,
            boolean fair) {
        return Timer.builder(name)
            .description(description)
            .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
            .tag("fair", Boolean.toString(fair))
            .register(registry);
    }

    @Override
    public void waited(boolean fair, WaitOutcome outcome, long nanos) {
        (fair ? this.fairWaits : this.unfairWaits).get(outcome).record(nanos, TimeUnit.NANOSECONDS);
        if (outcome == WaitOutcome.ACQUIRED) {
            this.active.incrementAndGet();
        }
    }

    @Override
    public void held(boolean fair, HoldOutcome outcome, long nanos) {
        this.active.decrementAndGet();
        (fair ? this.fairHolds : this.unfairHolds).get(outcome).record(nanos, TimeUnit.NANOSECONDS);
        if (outcome == HoldOutcome.LOST) {
            this.lost.increment();
        }
    }
}
