package io.github.distlock.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * etcd unreachable from the moment the registry starts (the network to it resets every
 * connection): every acquisition fails within its wait timeout with a
 * {@link LockAcquisitionException} that names the endpoints, nothing is left waiting, and once
 * etcd is reachable the next acquisition works, also after an outage long enough for gRPC to back
 * off its reconnection attempts.
 */
@FaultInjectionTest
class EtcdUnreachableIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(60);

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    /** Slack for scheduling on a loaded 2-core machine, added to every bound. */
    private static final Duration SLACK = Duration.ofMillis(1500);

    private final List<AutoCloseable> resources = new ArrayList<>();

    private final String namespace = "/fault-unreachable-" + UUID.randomUUID() + "/";

    private TcpProxy proxy;

    private EtcdLockRegistry registry;

    @BeforeEach
    void setUp() {
        this.proxy = TcpProxy.start(etcd.clientEndpoints().get(0));
        this.resources.add(this.proxy);
        this.proxy.reset();
        Client client = Client.builder().endpoints(this.proxy.endpoint()).build();
        this.resources.add(client);
        this.registry = EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(5))
            .requestTimeout(REQUEST_TIMEOUT)
            .ownerIdentity("unreachable")
            .endpoints(List.of(this.proxy.endpoint()))
            .build();
        this.resources.add(this.registry);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    /**
     * A connect waits up to a request timeout while etcd cannot be reached, for each health probe
     * and endpoint request that starts one: on a thread of the registry, not of the JVM's common
     * pool, which the application's parallel streams and async tasks share.
     */
    @Test
    void aConnectWaitsOnARegistryThreadNotOnTheCommonPool() throws Exception {
        CompletableFuture<Void> connecting = this.registry.connect();
        await().atMost(REQUEST_TIMEOUT).pollInterval(Duration.ofMillis(10))
            .until(() -> Thread.getAllStackTraces().keySet().stream()
                .anyMatch((thread) -> thread.getName().startsWith("distlock-etcd-connect")));
        assertThatExceptionOfType(ExecutionException.class)
            .isThrownBy(() -> connecting.get(LONG.toSeconds(), TimeUnit.SECONDS))
            .havingCause().withMessageContaining("Could not connect to etcd at [" + this.proxy.endpoint() + "]");
    }

    @Test
    void everyAcquisitionFailsWithinItsWaitTimeoutNamingTheEndpointsAndNothingIsLeftBehind() throws Exception {
        String endpoint = this.proxy.endpoint();
        assertThatExceptionOfType(ExecutionException.class)
            .isThrownBy(() -> this.registry.connect().get(LONG.toSeconds(), TimeUnit.SECONDS))
            .havingCause().withMessageContaining("Could not connect to etcd at [" + endpoint + "]");

        FencedLock lock = this.registry.obtain("order-1", true);
        assertFailsWithin(Duration.ofSeconds(3), () -> lock.tryLock(3, TimeUnit.SECONDS), endpoint);
        assertFailsWithin(Duration.ZERO, () -> lock.tryLock(), endpoint);
        assertFailsWithin(REQUEST_TIMEOUT, () -> {
            lock.lock();
            return true;
        }, endpoint);
        assertFailsWithin(REQUEST_TIMEOUT, () -> {
            lock.lockInterruptibly();
            return true;
        }, endpoint);
        FencedLock unfair = this.registry.obtain("order-1", false);
        assertFailsWithin(Duration.ofSeconds(2), () -> unfair.tryLock(2, TimeUnit.SECONDS), endpoint);

        assertThat(this.registry.getWaitingThreadCount()).isZero();
        assertThat(this.registry.getHeldLockCount()).isZero();
        // Questions only etcd can answer fail clearly, within the request timeout, instead of guessing.
        long asked = System.nanoTime();
        assertThatIllegalStateException().isThrownBy(lock::isLocked)
            .withMessageContaining("Could not read the state of lock 'order-1' from etcd at [" + endpoint + "]");
        assertThat(Duration.ofNanos(System.nanoTime() - asked)).isLessThanOrEqualTo(REQUEST_TIMEOUT.plus(SLACK));
        assertThat(this.registry.getStatistics().getFailed()).isEqualTo(5);

        this.proxy.restore();
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        lock.unlock();
        // Nothing that the failed calls might have written is left in etcd.
        try (Client direct = etcd.newClient()) {
            await().atMost(LONG).until(() -> direct.getKVClient()
                .get(ByteSequence.from(this.namespace, java.nio.charset.StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).withCountOnly(true).build())
                .get(10, TimeUnit.SECONDS)
                .getCount() == 0);
        }
    }

    @Test
    void nextAcquisitionWorksPromptlyWhenEtcdReturnsAfterAnOutageLongEnoughForGrpcToBackOff() throws Exception {
        FencedLock lock = this.registry.obtain("order-2", true);
        assertFailsWithin(Duration.ofSeconds(1), () -> lock.tryLock(1, TimeUnit.SECONDS), this.proxy.endpoint());
        // Nothing calls etcd for 20 s: by then gRPC waits about 10 s between connection attempts
        // (1 s, then 1.6 times longer each time), so on its own it would reconnect up to 10 s late.
        long outageEnds = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        await().atMost(LONG).pollInterval(Duration.ofMillis(100)).until(() -> System.nanoTime() - outageEnds >= 0);
        this.proxy.restore();
        long restoredAt = System.nanoTime();

        // The first call fails fast on the channel in backoff, resets it, and retries in time.
        assertThat(lock.tryLock(3, TimeUnit.SECONDS)).isTrue();
        Duration acquiredAfter = Duration.ofNanos(System.nanoTime() - restoredAt);
        lock.unlock();
        System.out.printf("[unreachable] acquired %d ms after etcd became reachable again, after a 20 s outage%n",
                acquiredAfter.toMillis());
    }

    private interface Acquisition {

        boolean run() throws Exception;
    }

    /** Expects the acquisition to throw LockAcquisitionException naming the endpoint, within its bound. */
    private static void assertFailsWithin(Duration bound, Acquisition acquisition, String endpoint) {
        long start = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(acquisition::run)
            .withMessageContaining(endpoint);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf("[unreachable] failed after %d ms, for a bound of %d ms%n", took.toMillis(), bound.toMillis());
        assertThat(took).as("time to fail, for a bound of %s", bound).isLessThanOrEqualTo(bound.plus(SLACK));
    }
}
