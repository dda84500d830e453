package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.distlock.AbstractKeySizeLimitTests;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Key sizes on a real ZooKeeper server: a lock node path is limited to half of
 * {@code jute.maxbuffer} (524,287 bytes by default). A longer key was sent before: over
 * {@code jute.maxbuffer} the server dropped the connection that every hold of the client shares,
 * and Curator resent the request on every reconnection.
 */
class ZookeeperKeySizeIntegrationTests extends AbstractKeySizeLimitTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static final String NAMESPACE = "/key-size";

    private static CuratorFramework client;

    private static CuratorFramework peerClient;

    private static ZookeeperLockRegistry registry;

    private static ZookeeperLockRegistry peer;

    private long connectionChanges;

    private long sessionId;

    @BeforeAll
    static void startRegistries() {
        client = ZookeeperTestClients.started(zookeeper.ensemble());
        peerClient = ZookeeperTestClients.started(zookeeper.ensemble());
        registry = ZookeeperLockRegistry.builder(client).namespace(NAMESPACE).ownerIdentity("registry")
            .description(zookeeper.ensemble().toString()).build();
        peer = ZookeeperLockRegistry.builder(peerClient).namespace(NAMESPACE).ownerIdentity("peer")
            .description(zookeeper.ensemble().toString()).build();
    }

    @AfterAll
    static void closeRegistries() {
        registry.close();
        peer.close();
        client.close();
        peerClient.close();
    }

    @Override
    protected InspectableLockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected long limit() {
        return 0xfffff / 2;
    }

    @Override
    protected long sizeOf(String key) {
        return registry.keyspace().lockNode(key).getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    protected void markConnection() {
        this.connectionChanges = registry.zookeeper().connectionChanges();
        this.sessionId = sessionId();
    }

    /** A dropped connection shows at once: the server closes it on reading the request's length. */
    @Override
    protected void assertConnectionUndisturbed() {
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
            .until(() -> registry.zookeeper().connectionChanges() == this.connectionChanges);
        assertThat(sessionId()).isEqualTo(this.sessionId);
        assertThat(registry.isSessionAlive()).isTrue();
    }

    private static long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
