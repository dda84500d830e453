package io.github.distlock.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.LockStatistics;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Keep-alives of the session lease cut off by the network (connections reset, or stalled as when
 * packets are dropped) or refused by etcd (the lease revoked behind the registry's back): an
 * interruption shorter than the lease TTL costs nothing, a longer one is detected within the TTL,
 * reported as lost holds, and the next acquisition starts a new session.
 */
@FaultInjectionTest
class KeepAliveInterruptionIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(60);

    /** What the network does to the registry's connections. */
    enum NetworkFault {

        RESET(TcpProxy::reset), STALL(TcpProxy::stall);

        private final Consumer<TcpProxy> inject;

        NetworkFault(Consumer<TcpProxy> inject) {
            this.inject = inject;
        }
    }

    private final List<AutoCloseable> resources = new ArrayList<>();

    private String namespace;

    private TcpProxy proxy;

    private EtcdLockRegistry direct;

    @BeforeEach
    void setUp() {
        this.namespace = "/fault-keepalive-" + UUID.randomUUID() + "/";
        this.proxy = track(TcpProxy.start(etcd.clientEndpoints().get(0)));
        this.direct = registry(etcd.newClient(), Duration.ofSeconds(10), "direct");
    }

    @AfterEach
    void tearDown() throws Exception {
        this.proxy.restore();
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    @ParameterizedTest
    @EnumSource(NetworkFault.class)
    void interruptionShorterThanTheLeaseTtlKeepsTheHoldAndTheLease(NetworkFault fault) throws Exception {
        // TTL 12 s: keep-alives every 4 s, each given up after the 2 s request timeout.
        EtcdLockRegistry registry = registry(proxiedClient(), Duration.ofSeconds(12), "proxied");
        FencedLock lock = registry.obtain("short-" + fault, true);
        lock.lock();
        try {
            long fence = lock.getFence();
            String lease = registry.describeLock("short-" + fault, 10).holder().leaseId();
            long errorsBefore = registry.getStatistics().getBackendErrors();
            // Start right after a renewal and end once a keep-alive has failed: about 4 s (reset) or
            // 6 s (stall, the attempt times out) later, with over 11 s of the lease left.
            await().atMost(LONG).pollInterval(Duration.ofMillis(10))
                .until(() -> registry.getSessionRenewalAge().compareTo(Duration.ofMillis(500)) < 0);
            fault.inject.accept(this.proxy);
            await().atMost(LONG).pollInterval(Duration.ofMillis(10))
                .until(() -> registry.getStatistics().getBackendErrors() > errorsBefore);
            this.proxy.restore();
            long restoredAt = System.nanoTime();

            // A keep-alive sent after the network returned was acknowledged.
            await().atMost(LONG).pollInterval(Duration.ofMillis(20)).until(() -> registry.getSessionRenewalAge()
                .compareTo(Duration.ofNanos(System.nanoTime() - restoredAt)) < 0);
            LockStatistics statistics = registry.getStatistics();
            assertThat(statistics.getHoldsLost()).isZero();
            assertThat(statistics.getSessionsLost()).isZero();
            assertThat(lock.isLockedByCurrentThread()).isTrue();
            assertThat(lock.getFence()).isEqualTo(fence);
            assertThat(registry.describeLock("short-" + fault, 10).holder().leaseId()).isEqualTo(lease);
            assertThat(this.direct.obtain("short-" + fault).tryLock()).as("taken by another registry").isFalse();
        }
        finally {
            lock.unlock();
        }
    }

    @ParameterizedTest
    @EnumSource(NetworkFault.class)
    void interruptionLongerThanTheLeaseTtlIsDetectedWithinTheTtlAndANewSessionServesLaterCalls(NetworkFault fault)
            throws Exception {
        long ttlSeconds = 2;
        String key = "long-" + fault;
        EtcdLockRegistry registry = registry(proxiedClient(), Duration.ofSeconds(ttlSeconds), "proxied");
        FencedLock lock = registry.obtain(key, true);
        lock.lock();
        long fence = lock.getFence();
        String lease = registry.describeLock(key, 10).holder().leaseId();

        fault.inject.accept(this.proxy);
        long faultAt = System.nanoTime();
        await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(10))
            .until(() -> !lock.isLockedByCurrentThread());
        Duration detectedAfter = Duration.ofNanos(System.nanoTime() - faultAt);
        // The hold ends one TTL after the last acknowledged keep-alive was sent, which was before the fault.
        assertThat(detectedAfter).isLessThanOrEqualTo(Duration.ofSeconds(ttlSeconds).plusMillis(500));
        assertThat(registry.isSessionAlive()).isFalse();
        // Counted by the task that ends the session, which runs just after the deadline.
        await().atMost(LONG).until(() -> registry.getStatistics().getSessionsLost() == 1
                && registry.getStatistics().getHoldsLost() == 1);

        // etcd, which stopped hearing from the registry, lets the lease expire: another process enters.
        FencedLock other = this.direct.obtain(key, true);
        assertThat(other.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Duration takenOverAfter = Duration.ofNanos(System.nanoTime() - faultAt);
        long otherFence = other.getFence();
        assertThat(otherFence).isGreaterThan(fence);
        this.proxy.restore();
        System.out.printf("[keep-alive %s] hold reported lost %d ms after the fault, taken over after %d ms "
                + "(TTL %d s)%n", fault, detectedAfter.toMillis(), takenOverAfter.toMillis(), ttlSeconds);

        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
            .satisfies(ex -> assertThat(ex.getFence()).isEqualTo(fence));
        other.unlock();
        long restoredAt = System.nanoTime();
        FencedLock again = registry.obtain(key, true);
        assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        System.out.printf("[keep-alive %s] acquired on a new session %d ms after the network returned%n", fault,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restoredAt));
        try {
            assertThat(again.getFence()).isGreaterThan(otherFence);
            assertThat(registry.describeLock(key, 10).holder().leaseId()).isNotEqualTo(lease);
            assertThat(registry.isSessionAlive()).isTrue();
        }
        finally {
            again.unlock();
        }
    }

    @Test
    void sessionLeaseRevokedBehindTheRegistrysBackIsDetectedAtTheNextKeepAlive() throws Exception {
        // TTL 3 s: a keep-alive every second; etcd answers the first one after the revoke with "not found".
        EtcdLockRegistry registry = registry(etcd.newClient(), Duration.ofSeconds(3), "revoked");
        FencedLock lock = registry.obtain("revoked", true);
        lock.lock();
        long fence = lock.getFence();
        long lease = Long.parseUnsignedLong(registry.describeLock("revoked", 10).holder().leaseId(), 16);
        try (Client raw = etcd.newClient()) {
            raw.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        }
        long revokedAt = System.nanoTime();
        await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(10))
            .until(() -> !lock.isLockedByCurrentThread());
        // Well before the 3 s TTL would have run out: etcd said the lease is gone.
        assertThat(Duration.ofNanos(System.nanoTime() - revokedAt)).isLessThan(Duration.ofMillis(2500));
        await().atMost(LONG).until(() -> registry.getStatistics().getHoldsLost() == 1);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        FencedLock again = registry.obtain("revoked", true);
        assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(again.getFence()).isGreaterThan(fence);
        again.unlock();
    }

    private Client proxiedClient() {
        // gRPC keep-alives as the auto-configuration sets them by default.
        return track(Client.builder()
            .endpoints(this.proxy.endpoint())
            .keepaliveTime(Duration.ofSeconds(10))
            .keepaliveTimeout(Duration.ofSeconds(3))
            .keepaliveWithoutCalls(true)
            .build());
    }

    private EtcdLockRegistry registry(Client client, Duration ttl, String owner) {
        if (!this.resources.contains(client)) {
            track(client);
        }
        return track(EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(ttl)
            .requestTimeout(Duration.ofSeconds(2))
            .ownerIdentity(owner)
            .endpoints(List.of(this.proxy.endpoint()))
            .build());
    }

    private <T extends AutoCloseable> T track(T resource) {
        this.resources.add(resource);
        return resource;
    }
}
