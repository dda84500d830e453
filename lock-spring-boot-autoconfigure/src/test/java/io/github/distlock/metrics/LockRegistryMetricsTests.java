package io.github.distlock.metrics;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The meters of an {@link EtcdLockRegistry} against a real etcd: every one is registered with the
 * namespace tag and moves with what the registry does.
 */
class LockRegistryMetricsTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    private final MeterRegistry meters = new SimpleMeterRegistry();

    private Client client;

    private EtcdLockRegistry registry;

    private String namespace;

    @BeforeEach
    void setUp() {
        this.namespace = "/metrics-" + UUID.randomUUID() + "/";
        this.client = etcd.newClient();
        this.registry = EtcdLockRegistry.builder(this.client)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(3))
            .endpoints(etcd.clientEndpoints())
            // Passes for 5 s rather than 10 ms: a waiter scheduled late still gets the entry passed.
            .localHandoff(new LocalHandoff(Duration.ofSeconds(5), Duration.ZERO))
            .build();
        new LockRegistryMetrics(this.registry).bindTo(this.meters);
    }

    @AfterEach
    void tearDown() {
        this.registry.close();
        this.client.close();
    }

    @Test
    void metersFollowAcquisitionsWaitsAndTheSession() throws Exception {
        assertThat(gauge("distributed.lock.session.alive")).isZero();
        assertThat(gauge("distributed.lock.session.renewal.age")).isZero();

        FencedLock lock = this.registry.obtain("job", true);
        lock.lock();
        CompletableFuture<Boolean> waiter = CompletableFuture
            .supplyAsync(() -> tryLock(this.registry.obtain("job", true), LONG));
        await().atMost(LONG).until(() -> gauge("distributed.lock.waiting") == 1);
        assertThat(gauge("distributed.lock.holds")).isEqualTo(1);
        assertThat(gauge("distributed.lock.session.alive")).isEqualTo(1);
        // Renewed every third of the 3 s TTL while etcd is healthy.
        assertThat(gauge("distributed.lock.session.renewal.age")).isBetween(0.0, 3.0);
        assertThat(CompletableFuture.supplyAsync(() -> tryLock(this.registry.obtain("job"), Duration.ZERO)).get())
            .isFalse();
        lock.unlock();
        assertThat(waiter.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();

        assertThat(gauge("distributed.lock.waiting")).isZero();
        assertThat(gauge("distributed.lock.holds")).isZero();
        assertThat(acquisitions("acquired")).isEqualTo(2);
        assertThat(acquisitions("timeout")).isEqualTo(1);
        assertThat(acquisitions("failed")).isZero();
        assertThat(counter("distributed.lock.holds.lost")).isZero();
        assertThat(counter("distributed.lock.kept.entries.lost")).isZero();
        assertThat(counter("distributed.lock.sessions.lost")).isZero();
        assertThat(counter("distributed.lock.backend.errors")).isZero();
    }

    @Test
    void anUnfairLockPassedToAnotherThreadOfTheProcessCountsALocalHandoff() throws Exception {
        FencedLock lock = this.registry.obtain("hot-sku");
        lock.lock();
        CompletableFuture<Boolean> waiter = CompletableFuture
            .supplyAsync(() -> tryLock(this.registry.obtain("hot-sku"), LONG));
        await().atMost(LONG).until(() -> gauge("distributed.lock.waiting") == 1);
        assertThat(counter("distributed.lock.local.handoffs")).isZero();
        lock.unlock();
        assertThat(waiter.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // The waiter took the store entry over without a round trip.
        assertThat(counter("distributed.lock.local.handoffs")).isEqualTo(1);
        assertThat(acquisitions("acquired")).isEqualTo(2);
    }

    @Test
    void aLostSessionMovesTheLossAndErrorCounters() throws Exception {
        FencedLock lock = this.registry.obtain("job");
        lock.lock();
        etcd.cluster().member(0).pause();
        try {
            await().atMost(LONG).until(() -> gauge("distributed.lock.session.alive") == 0);
            assertThat(gauge("distributed.lock.session.renewal.age")).isGreaterThanOrEqualTo(3.0);
            assertThat(gauge("distributed.lock.holds")).isZero();
            await().atMost(LONG).until(() -> counter("distributed.lock.holds.lost") == 1);
            assertThat(counter("distributed.lock.sessions.lost")).isEqualTo(1);
            assertThat(counter("distributed.lock.backend.errors")).isPositive();
        }
        finally {
            etcd.cluster().member(0).resume();
        }
        assertThat(lock.isLockedByCurrentThread()).isFalse();
    }

    private boolean tryLock(FencedLock lock, Duration timeout) {
        try {
            boolean acquired = lock.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (acquired) {
                lock.unlock();
            }
            return acquired;
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** A gauge's value; time gauges in seconds, the simple registry's base unit. */
    private double gauge(String name) {
        return this.meters.get(name).tag("namespace", this.namespace).gauge().value();
    }

    private double counter(String name) {
        return this.meters.get(name).tag("namespace", this.namespace).functionCounter().count();
    }

    private double acquisitions(String outcome) {
        return this.meters.get("distributed.lock.acquisitions")
            .tags("namespace", this.namespace, "outcome", outcome)
            .functionCounter()
            .count();
    }
}
