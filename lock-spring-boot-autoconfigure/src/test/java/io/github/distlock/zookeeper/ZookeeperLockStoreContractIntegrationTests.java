package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.UUID;

import io.github.distlock.core.LockCounters;
import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The ZooKeeper store against the store contract, on a real ZooKeeper server: two stores with
 * their own Curator clients and sessions stand for two processes.
 */
class ZookeeperLockStoreContractIntegrationTests extends AbstractLockStoreContractTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework raw;

    private CuratorFramework client;

    private CuratorFramework peerClient;

    private ZookeeperLockStore store;

    private ZookeeperLockStore peerStore;

    @BeforeAll
    static void startRawClient() {
        raw = ZookeeperTestClients.started(zookeeper.ensemble());
    }

    @AfterAll
    static void stopRawClient() {
        raw.close();
    }

    @BeforeEach
    void openStores() {
        ZookeeperKeyspace keyspace = new ZookeeperKeyspace("/store-contract-" + UUID.randomUUID());
        this.client = ZookeeperTestClients.started(zookeeper.ensemble());
        this.peerClient = ZookeeperTestClients.started(zookeeper.ensemble());
        this.store = new ZookeeperLockStore(this.client, keyspace, Duration.ofSeconds(5), "store",
                zookeeper.ensemble().toString(), new LockCounters(), lossListener());
        this.peerStore = new ZookeeperLockStore(this.peerClient, keyspace, Duration.ofSeconds(5), "peer",
                zookeeper.ensemble().toString(), new LockCounters(), lossListener());
    }

    @AfterEach
    void closeStores() {
        this.store.close();
        this.peerStore.close();
        this.client.close();
        this.peerClient.close();
    }

    @Override
    protected LockStore store() {
        return this.store;
    }

    @Override
    protected LockStore peerStore() {
        return this.peerStore;
    }

    @Override
    protected boolean endSessionBehindTheStoresBack(LockStore lockStore) throws Exception {
        CuratorFramework owner = (lockStore == this.store) ? this.client : this.peerClient;
        ZookeeperTestClients.expireSession(owner, zookeeper.ensemble());
        return true;
    }

    @Override
    protected boolean endHoldBehindTheStoresBack(StoreEntry entry) throws Exception {
        // As an operator's zkCli delete would.
        raw.delete().forPath(((ZookeeperEntry) entry).path());
        return true;
    }

    @Override
    protected boolean loseHoldAheadOfTheBackend(StoreEntry entry) {
        // What the session does when its deadline passes before the backend expires it.
        ((AbstractStoreEntry) entry).lose("its session's deadline passed (by the test)", true);
        return true;
    }
}
