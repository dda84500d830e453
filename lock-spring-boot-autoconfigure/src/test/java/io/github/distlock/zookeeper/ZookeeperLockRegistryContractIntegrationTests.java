package io.github.distlock.zookeeper;

import io.github.distlock.AbstractLockRegistryContractTests;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The registry contract against a real ZooKeeper server: {@link #registry()} and
 * {@link #peerRegistry()} use separate Curator clients and sessions, as two processes would.
 */
class ZookeeperLockRegistryContractIntegrationTests extends AbstractLockRegistryContractTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework client;

    private static CuratorFramework peerClient;

    private static CuratorFramework raw;

    private static ZookeeperLockRegistry registry;

    private static ZookeeperLockRegistry peer;

    @BeforeAll
    static void startRegistries() {
        client = ZookeeperTestClients.started(zookeeper.ensemble());
        peerClient = ZookeeperTestClients.started(zookeeper.ensemble());
        raw = ZookeeperTestClients.started(zookeeper.ensemble());
        registry = newRegistry(client, "registry");
        peer = newRegistry(peerClient, "peer");
    }

    private static ZookeeperLockRegistry newRegistry(CuratorFramework curator, String owner) {
        return ZookeeperLockRegistry.builder(curator).namespace("/contract").ownerIdentity(owner)
            .description(zookeeper.ensemble().toString()).build();
    }

    @AfterAll
    static void closeRegistries() {
        registry.close();
        peer.close();
        client.close();
        peerClient.close();
        raw.close();
    }

    @Override
    protected LockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected int waitersQueued(String key) {
        return registry.queuedWaiters(key) + peer.queuedWaiters(key);
    }

    @Override
    protected void assertNoTracesLeft(String key) {
        String lockNode = registry.keyspace().lockNode(key);
        await().atMost(responseTime()).untilAsserted(() -> assertThat(
                (raw.checkExists().forPath(lockNode) == null) ? 0 : raw.getChildren().forPath(lockNode).size())
            .as("entries left in ZooKeeper for '%s'", key).isZero());
    }

    @Override
    protected int contentionIterations() {
        return 60;
    }
}
