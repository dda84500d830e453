package io.github.distlock.zookeeper;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.distlock.AbstractLocalHandoffIntegrationTests;
import io.github.distlock.LocalHandoff;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Local handoffs on ZooKeeper: a children watch left by the read that showed the holder first (or
 * by one more read, for an entry that took the key after waiting) tells it when another process
 * queues behind it.
 */
class ZookeeperLocalHandoffIntegrationTests extends AbstractLocalHandoffIntegrationTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework raw;

    private final List<ZookeeperLockRegistry> registries = new CopyOnWriteArrayList<>();

    private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

    private String namespace;

    @BeforeAll
    static void startRawClient() {
        raw = ZookeeperTestClients.started(zookeeper.ensemble());
    }

    @AfterAll
    static void stopRawClient() {
        raw.close();
    }

    @BeforeEach
    void newNamespace() {
        this.namespace = "/handoff-" + UUID.randomUUID();
    }

    @AfterEach
    void closeRegistries() {
        this.registries.forEach(ZookeeperLockRegistry::close);
        this.clients.forEach(CuratorFramework::close);
    }

    @Override
    protected ZookeeperLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        CuratorFramework client = ZookeeperTestClients.started(zookeeper.ensemble());
        this.clients.add(client);
        ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client)
            .namespace(this.namespace)
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .description(zookeeper.ensemble().toString())
            .build();
        this.registries.add(registry);
        return registry;
    }

    @Override
    protected void deleteEntriesBehindTheRegistrysBack(String key) throws Exception {
        String lockNode = new ZookeeperKeyspace(this.namespace).lockNode(key);
        for (String entry : raw.getChildren().forPath(lockNode)) {
            raw.delete().forPath(lockNode + "/" + entry);
        }
    }

    /** The entries' node names under the key's lock node: a new entry has a new sequence number. */
    @Override
    protected List<String> entries(String key) throws Exception {
        String lockNode = new ZookeeperKeyspace(this.namespace).lockNode(key);
        if (raw.checkExists().forPath(lockNode) == null) {
            return List.of();
        }
        return ZookeeperLockStore.sortedEntries(raw.getChildren().forPath(lockNode));
    }

    /**
     * No: the try-once's create ends the linger, and ZooKeeper may apply the lingering entry's
     * deletion before it serves the try-once's read of the queue (a create and a read are two
     * requests here, one transaction on the other stores).
     */
    @Override
    protected boolean tryOnceFindsTheLingeringEntry() {
        return false;
    }
}
