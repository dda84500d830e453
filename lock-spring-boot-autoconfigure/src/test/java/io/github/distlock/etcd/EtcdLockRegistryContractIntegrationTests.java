package io.github.distlock.etcd;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.AbstractLockRegistryContractTests;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The registry contract against a real etcd: {@link #registry()} and {@link #peerRegistry()} use
 * separate clients and sessions, as two processes would.
 */
class EtcdLockRegistryContractIntegrationTests extends AbstractLockRegistryContractTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final String NAMESPACE = "/contract/";

    private static Client client;

    private static Client peerClient;

    private static Client rawClient;

    private static EtcdLockRegistry registry;

    private static EtcdLockRegistry peer;

    @BeforeAll
    static void startRegistries() {
        client = etcd.newClient();
        peerClient = etcd.newClient();
        rawClient = etcd.newClient();
        registry = newRegistry(client, "registry");
        peer = newRegistry(peerClient, "peer");
    }

    private static EtcdLockRegistry newRegistry(Client etcdClient, String owner) {
        // The TTL is far above responseTime(): an entry left behind would block the next waiter
        // for the rest of its lease and fail the handoff bounds.
        return EtcdLockRegistry.builder(etcdClient)
            .namespace(NAMESPACE)
            .leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @AfterAll
    static void closeRegistries() {
        registry.close();
        peer.close();
        client.close();
        peerClient.close();
        rawClient.close();
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
        await().atMost(responseTime()).untilAsserted(() -> assertThat(rawClient.getKVClient()
            .get(registry.keyspace().root(key), GetOption.builder().isPrefix(true).withCountOnly(true).build())
            .get(10, TimeUnit.SECONDS)
            .getCount()).as("entries left in etcd for '%s'", key).isZero());
    }

    @Override
    protected int contentionIterations() {
        return 60;
    }
}
