package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.testsupport.TcpProxy;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Listing a namespace whose lock nodes are mostly empty, as they are for a while after their last
 * entry (ZooKeeper deletes an empty container at its next container check, a minute by default):
 * over a network path of 20 ms per round trip, a read per lock after another would take 40 s for
 * 2,000 nodes; the listing answers within the 5 s request timeout.
 */
class ZookeeperListingIntegrationTests {

    private static final int EMPTY_LOCK_NODES = 2000;

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework raw;

    @BeforeAll
    static void startRawClient() {
        raw = ZookeeperTestClients.started(zookeeper.ensemble());
    }

    @AfterAll
    static void stopRawClient() {
        raw.close();
    }

    @Test
    void aNamespaceWithThousandsOfEmptyLockNodesIsListedWithinTheRequestTimeout() throws Exception {
        String namespace = "/listing-" + UUID.randomUUID();
        ZookeeperKeyspace keyspace = new ZookeeperKeyspace(namespace);
        // Persistent nodes rather than containers, so that none is deleted while the test runs; one
        // transaction, one write.
        List<CuratorOp> creates = new ArrayList<>();
        creates.add(raw.transactionOp().create().forPath(namespace));
        for (int i = 0; i < EMPTY_LOCK_NODES; i++) {
            creates.add(raw.transactionOp().create().forPath(keyspace.lockNode("order-" + i)));
        }
        raw.transaction().forOperations(creates);
        try (TcpProxy proxy = TcpProxy.start("http://" + zookeeper.connectString())) {
            CuratorFramework client = ZookeeperTestClients.started("127.0.0.1:" + proxy.port(),
                    ZookeeperTestClients.SESSION_TIMEOUT_MILLIS);
            try (ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client)
                .namespace(namespace)
                .requestTimeout(Duration.ofSeconds(5))
                .build()) {
                FencedLock held = registry.obtain("order-7");
                assertThat(held.tryLock(30, TimeUnit.SECONDS)).isTrue();
                proxy.delay(Duration.ofMillis(10));
                NamespaceSnapshot listed = registry.describeLocks(100);
                proxy.delay(Duration.ZERO);
                assertThat(listed.locks()).extracting(LockSnapshot::key).containsExactly("order-7");
                assertThat(listed.truncated()).isFalse();
                held.unlock();
            }
            finally {
                client.close();
            }
        }
    }
}
