package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.NemesisStore.StoreFault;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.TcpProxy;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker of a Redis nemesis run reaches the primary, its replica and the Sentinel only through
 * its slot's proxies, as the runner sets them up: so a network fault on the proxies cuts the
 * worker off whichever server the Sentinel names, and the worker's connections come back through
 * the proxies after the heal, also to a primary that a failover promoted.
 */
@FaultInjectionTest
class RedisNemesisStoreIntegrationTests {

    private static final Duration TTL = Duration.ofSeconds(3);

    private RedisNemesisStore store;

    private final List<TcpProxy> proxies = new ArrayList<>();

    private TestStore worker;

    @AfterEach
    void close() {
        if (this.worker != null) {
            this.proxies.forEach(TcpProxy::restore);
            this.worker.close();
        }
        this.proxies.forEach(TcpProxy::close);
        if (this.store != null) {
            this.store.close();
        }
    }

    @Test
    void aWorkerReachesEveryServerOnlyThroughItsProxiesAlsoAfterAFailover() throws Exception {
        this.store = RedisNemesisStore.start();
        // As the runner does for a worker slot: a proxy per address, in the order addresses() gives them.
        for (String address : this.store.addresses()) {
            this.proxies.add(TcpProxy.start("tcp://" + address));
        }
        TcpProxy primaryProxy = this.proxies.get(0);
        TcpProxy replicaProxy = this.proxies.get(1);
        TcpProxy sentinelProxy = this.proxies.get(2);
        this.worker = TestStore.open(this.store.spec(this.proxies.stream().map((proxy) -> "127.0.0.1:" + proxy.port())
            .toList()));
        CoreLockRegistry<?> registry = this.worker.registry(RedisNemesisStore.NAMESPACE, TTL, "w1");

        assertThat(acquireAndRelease(registry, "before", 30)).as("granted with every proxy forwarding").isTrue();
        // The client asked the Sentinel, then connected to the primary it named (m0 at the start), through both proxies.
        assertThat(sentinelProxy.forwardedConnections()).isPositive();
        assertThat(primaryProxy.forwardedConnections()).isPositive();
        assertThat(replicaProxy.forwardedConnections()).isZero();

        // A black hole on every proxy of the slot: no request can reach Redis around them.
        this.proxies.forEach(TcpProxy::stall);
        assertThat(acquireAndRelease(registry, "black-holed", 1)).as("granted while every proxy is black-holed")
            .isFalse();
        this.proxies.forEach(TcpProxy::restore);
        assertThat(acquireAndRelease(registry, "after-black-hole", 30)).as("granted after the heal").isTrue();

        // Resets: Lettuce's own reconnects, or the registry's new pair, go through the proxies again after the heal.
        long primaryBefore = primaryProxy.forwardedConnections();
        this.proxies.forEach(TcpProxy::reset);
        assertThat(acquireAndRelease(registry, "reset", 1)).as("granted while every proxy resets").isFalse();
        this.proxies.forEach(TcpProxy::restore);
        assertThat(acquireAndRelease(registry, "after-reset", 30)).as("granted after the heal").isTrue();
        assertThat(primaryProxy.forwardedConnections()).isGreaterThan(primaryBefore);

        // Connections dropped silently: the registry replaces the silent pair, through the proxy.
        primaryBefore = primaryProxy.forwardedConnections();
        this.proxies.forEach(TcpProxy::severOpenConnections);
        assertThat(acquireAndRelease(registry, "severed", 30)).as("granted once the silent pair was replaced")
            .isTrue();
        assertThat(primaryProxy.forwardedConnections()).isGreaterThan(primaryBefore);
        this.proxies.forEach(TcpProxy::resetSevered);

        // The Sentinel fails over to m1: the client is sent to m1's address, which it maps to m1's proxy.
        StoreFault kill = this.store.fault(new Fault(0, Action.KILL_MEMBER, 0, true, 0, 0));
        assertThat(kill.target()).isEqualTo("m0(primary)");
        kill.start().run();
        kill.heal().run();
        assertThat(acquireAndRelease(registry, "after-failover", 30)).as("granted after the failover").isTrue();
        assertThat(replicaProxy.forwardedConnections()).as("connections through the promoted replica's proxy")
            .isPositive();

        // And a black hole on the slot's proxies still cuts it off from the new primary.
        this.proxies.forEach(TcpProxy::stall);
        assertThat(acquireAndRelease(registry, "black-holed-again", 1)).as("granted while black-holed after the "
                + "failover").isFalse();
        this.proxies.forEach(TcpProxy::restore);
        assertThat(acquireAndRelease(registry, "after-failover-black-hole", 30)).as("granted after the heal").isTrue();
    }

    /** @return whether {@code key} was granted within {@code seconds} (then released at once) */
    private static boolean acquireAndRelease(CoreLockRegistry<?> registry, String key, long seconds)
            throws InterruptedException {
        FencedLock lock = registry.obtain(key, true);
        boolean granted;
        try {
            granted = lock.tryLock(seconds, TimeUnit.SECONDS);
        }
        catch (LockAcquisitionException ex) {
            granted = false;
        }
        if (granted) {
            lock.unlock();
        }
        return granted;
    }
}
