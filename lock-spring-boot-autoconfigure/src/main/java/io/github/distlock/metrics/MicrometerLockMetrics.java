package io.github.distlock.metrics;

import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.aop.LockMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

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
 * Lock keys are not tags by default: they are unbounded (often one per entity) and would make a
 * time series each. An application with a small fixed set of keys can opt into a bounded
 * {@code key} tag on the timers and the counter: the first {@code maxKeyTags} distinct keys get
 * their own value, every later key is tagged {@value #OTHER_KEYS}.
 */
public final class MicrometerLockMetrics implements LockMetrics {

    /** The {@code key} tag of keys beyond the opted-in bound. */
    public static final String OTHER_KEYS = "other";

    private static final String WAIT = "distributed.lock.wait";

    private static final String HELD = "distributed.lock.held";

    private static final String LOST = "distributed.lock.lost";

    private static final String ACTIVE = "distributed.lock.active";

    private final MeterRegistry registry;

    private final int maxKeyTags;

    /** Keys that have a tag value of their own; never more than {@link #maxKeyTags}. */
    private final Set<String> taggedKeys = ConcurrentHashMap.newKeySet();

    private final AtomicInteger taggedKeyCount = new AtomicInteger();

    // Built once per tag combination rather than looked up in the meter registry on each call.
    private final Map<MeterId, Timer> timers = new ConcurrentHashMap<>();

    private final Map<String, Counter> lostCounters = new ConcurrentHashMap<>();

    private final AtomicInteger active = new AtomicInteger();

    /**
     * Registers meters without a key tag.
     * @param registry where to register them
     */
    public MicrometerLockMetrics(MeterRegistry registry) {
        this(registry, 0);
    }

    /**
     * Registers meters, with a bounded {@code key} tag if {@code maxKeyTags} is positive.
     * @param registry where to register them
     * @param maxKeyTags how many distinct keys get a tag value of their own; 0 for no key tag
     */
    public MicrometerLockMetrics(MeterRegistry registry, int maxKeyTags) {
        if (maxKeyTags < 0) {
            throw new IllegalArgumentException("maxKeyTags must not be negative, but was " + maxKeyTags);
        }
        this.registry = registry;
        this.maxKeyTags = maxKeyTags;
        Gauge.builder(ACTIVE, this.active, AtomicInteger::get)
            .description("Calls currently holding a distributed lock")
            .strongReference(true)
            .register(registry);
        if (maxKeyTags == 0) {
            // Every series exists from the start, as with fixed tags one expects.
            for (WaitOutcome outcome : WaitOutcome.values()) {
                timer(WAIT, outcome, true, null);
                timer(WAIT, outcome, false, null);
            }
            for (HoldOutcome outcome : HoldOutcome.values()) {
                timer(HELD, outcome, true, null);
                timer(HELD, outcome, false, null);
            }
            lostCounter(null);
        }
    }

    @Override
    public void waited(String key, boolean fair, WaitOutcome outcome, long nanos) {
        timer(WAIT, outcome, fair, keyTag(key)).record(nanos, TimeUnit.NANOSECONDS);
        if (outcome == WaitOutcome.ACQUIRED) {
            this.active.incrementAndGet();
        }
    }

    @Override
    public void held(String key, boolean fair, HoldOutcome outcome, long nanos) {
        this.active.decrementAndGet();
        String keyTag = keyTag(key);
        timer(HELD, outcome, fair, keyTag).record(nanos, TimeUnit.NANOSECONDS);
        if (outcome == HoldOutcome.LOST) {
            lostCounter(keyTag).increment();
        }
    }

    /** The key's tag value, or {@code null} without a key tag. */
    private @Nullable String keyTag(String key) {
        if (this.maxKeyTags == 0) {
            return null;
        }
        if (this.taggedKeys.contains(key)) {
            return key;
        }
        // Invariant: taggedKeyCount only grows, and a key is added only after reserving a place
        // below the bound, so at most maxKeyTags keys are ever tagged.
        int reserved = this.taggedKeyCount.getAndUpdate(count -> (count < this.maxKeyTags) ? count + 1 : count);
        if (reserved < this.maxKeyTags) {
            if (!this.taggedKeys.add(key)) {
                this.taggedKeyCount.decrementAndGet(); // another thread tagged the same key first
            }
            return key;
        }
        return OTHER_KEYS;
    }

    private Timer timer(String name, Enum<?> outcome, boolean fair, @Nullable String keyTag) {
        return this.timers.computeIfAbsent(new MeterId(name, outcome, fair, keyTag), id -> Timer.builder(name)
            .description(name.equals(WAIT) ? "Time spent waiting for a distributed lock"
                    : "Time a distributed lock was held")
            .tags(tags(keyTag))
            .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
            .tag("fair", Boolean.toString(fair))
            .register(this.registry));
    }

    private Counter lostCounter(@Nullable String keyTag) {
        return this.lostCounters.computeIfAbsent((keyTag != null) ? keyTag : "", k -> Counter.builder(LOST)
            .description("Distributed locks lost while the locked method ran")
            .tags(tags(keyTag))
            .register(this.registry));
    }

    private static Tags tags(@Nullable String keyTag) {
        return (keyTag != null) ? Tags.of("key", keyTag) : Tags.empty();
    }

    private record MeterId(String name, Enum<?> outcome, boolean fair, @Nullable String keyTag) {
    }
}
