package io.github.distlock.metrics;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockStatistics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.util.Assert;

/**
 * Meters of a lock registry (any {@link InspectableLockRegistry}: etcd, Redis, ZooKeeper, JDBC, in memory), for every
 * acquisition whether through {@code @DistributedLock} or the {@code LockRegistry} API, tagged
 * with the registry's
 * {@code namespace}:
 * <ul>
 * <li>{@code distributed.lock.acquisitions}: counter tagged {@code outcome} ({@code acquired},
 * {@code timeout}, {@code failed});</li>
 * <li>{@code distributed.lock.holds.lost}: counter of holds that ended without unlock;</li>
 * <li>{@code distributed.lock.kept.entries.lost}: counter of unfair entries the process kept between
 * holds (local handoffs, linger) that the store lost while no thread held them;</li>
 * <li>{@code distributed.lock.backend.errors}: counter of store requests that failed or timed out;</li>
 * <li>{@code distributed.lock.holds}: gauge of locks held right now;</li>
 * <li>{@code distributed.lock.waiting}: gauge of threads waiting for a lock right now;</li>
 * <li>{@code distributed.lock.session.alive}: gauge, 1 while the session lease is renewed, else 0;</li>
 * <li>{@code distributed.lock.session.renewal.age}: time gauge, how long ago the latest
 * acknowledged keep-alive was sent (below a third of the TTL when healthy; 0 before the first
 * session);</li>
 * <li>{@code distributed.lock.sessions.lost}: counter of session leases lost;</li>
 * <li>{@code distributed.lock.local.handoffs}: counter of acquisitions that took over an unfair
 * lock this process already owned in the store, without a round trip (see
 * {@link io.github.distlock.LocalHandoff}).</li>
 * </ul>
 * Lock keys are never tags. Gauges are read when scraped; the counters read running totals.
 */
public class LockRegistryMetrics implements MeterBinder {

    private final InspectableLockRegistry registry;

    /**
     * Creates the binder.
     * @param registry the registry to measure
     */
    public LockRegistryMetrics(InspectableLockRegistry registry) {
        Assert.notNull(registry, "registry must not be null");
        this.registry = registry;
    }

    @Override
    public void bindTo(MeterRegistry meterRegistry) {
        Tags tags = Tags.of("namespace", this.registry.getNamespace());
        LockStatistics statistics = this.registry.getStatistics();
        acquisitions(meterRegistry, tags, "acquired", statistics, LockStatistics::getAcquired);
        acquisitions(meterRegistry, tags, "timeout", statistics, LockStatistics::getTimedOut);
        acquisitions(meterRegistry, tags, "failed", statistics, LockStatistics::getFailed);
        FunctionCounter.builder("distributed.lock.local.handoffs", statistics, LockStatistics::getLocalHandoffs)
            .description("Acquisitions (among those acquired) that took over an unfair lock this process already "
                    + "owned in the store, without a store round trip")
            .tags(tags)
            .register(meterRegistry);
        FunctionCounter.builder("distributed.lock.holds.lost", statistics, LockStatistics::getHoldsLost)
            .description("Distributed locks lost while held: lease expired or entry deleted")
            .tags(tags)
            .register(meterRegistry);
        FunctionCounter.builder("distributed.lock.kept.entries.lost", statistics, LockStatistics::getKeptEntriesLost)
            .description("Unfair lock entries this process kept between holds that the store lost while no thread "
                    + "held them: deleted behind the registry's back, lost in a failover or with the session")
            .tags(tags)
            .register(meterRegistry);
        FunctionCounter.builder("distributed.lock.backend.errors", statistics, LockStatistics::getBackendErrors)
            .description("Lock store requests of the lock registry that failed or timed out")
            .tags(tags)
            .register(meterRegistry);
        FunctionCounter.builder("distributed.lock.sessions.lost", statistics, LockStatistics::getSessionsLost)
            .description("Lock store sessions lost: no renewal acknowledged within the lease TTL")
            .tags(tags)
            .register(meterRegistry);
        Gauge.builder("distributed.lock.holds", this.registry, InspectableLockRegistry::getHeldLockCount)
            .description("Distributed locks held by this process right now")
            .tags(tags)
            .register(meterRegistry);
        Gauge.builder("distributed.lock.waiting", this.registry, InspectableLockRegistry::getWaitingThreadCount)
            .description("Threads of this process waiting for a distributed lock right now")
            .tags(tags)
            .register(meterRegistry);
        Gauge.builder("distributed.lock.session.alive", this.registry, r -> r.isSessionAlive() ? 1 : 0)
            .description("1 while the lock store session is renewed, 0 otherwise")
            .tags(tags)
            .register(meterRegistry);
        TimeGauge.builder("distributed.lock.session.renewal.age", this.registry, TimeUnit.NANOSECONDS,
                LockRegistryMetrics::renewalAgeNanos)
            .description("Time since the latest acknowledged renewal of the lock store session was sent")
            .tags(tags)
            .register(meterRegistry);
    }

    private static void acquisitions(MeterRegistry meterRegistry, Tags tags, String outcome,
            LockStatistics statistics, ToDoubleFunction<LockStatistics> count) {
        FunctionCounter.builder("distributed.lock.acquisitions", statistics, count)
            .description("Acquisitions of distributed locks by outcome")
            .tags(tags)
            .tag("outcome", outcome)
            .register(meterRegistry);
    }

    private static double renewalAgeNanos(InspectableLockRegistry registry) {
        Duration age = registry.getSessionRenewalAge();
        return (age != null) ? age.toNanos() : 0;
    }
}
