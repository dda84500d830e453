package io.github.distlock.etcd;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.core.LockCounters;
import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The etcd store against the store contract, on a real etcd: two stores with their own clients
 * and sessions stand for two processes.
 */
class EtcdLockStoreContractIntegrationTests extends AbstractLockStoreContractTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private Client client;

    private Client peerClient;

    private EtcdLockStore store;

    private EtcdLockStore peerStore;

    @BeforeEach
    void openStores() {
        EtcdKeyspace keyspace = new EtcdKeyspace("/store-contract-" + UUID.randomUUID() + "/");
        this.client = etcd.newClient();
        this.peerClient = etcd.newClient();
        this.store = store(this.client, keyspace, "store");
        this.peerStore = store(this.peerClient, keyspace, "peer");
    }

    private EtcdLockStore store(Client client, EtcdKeyspace keyspace, String owner) {
        return new EtcdLockStore(client, keyspace, Duration.ofSeconds(5), Duration.ofSeconds(5), owner,
                String.valueOf(etcd.clientEndpoints()), new LockCounters(), lossListener());
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
    protected boolean endSessionBehindTheStoresBack(LockStore store) throws Exception {
        // As etcd would after the TTL, or an operator's etcdctl lease revoke.
        long lease = ((EtcdLockStore) store).sessions().liveLeaseId();
        this.peerClient.getLeaseClient().revoke(lease).get(30, TimeUnit.SECONDS);
        return true;
    }

    @Override
    protected boolean endHoldBehindTheStoresBack(StoreEntry entry) throws Exception {
        // As an operator's etcdctl del would.
        this.peerClient.getKVClient().delete(((QueueEntry) entry).key()).get(30, TimeUnit.SECONDS);
        return true;
    }

    @Override
    protected boolean loseHoldAheadOfTheBackend(StoreEntry entry) {
        // What the session does when its deadline passes before the backend expires it.
        ((QueueEntry) entry).sessionEnded("its session's deadline passed (by the test)");
        return true;
    }
}
