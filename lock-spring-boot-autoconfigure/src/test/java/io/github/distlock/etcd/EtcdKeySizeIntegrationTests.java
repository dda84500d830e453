package io.github.distlock.etcd;

import java.time.Duration;

import io.etcd.jetcd.Client;
import io.github.distlock.AbstractKeySizeLimitTests;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Key sizes on a real etcd: a lock's root is limited to 200 KiB, so that an entry's write, which
 * carries it seven times, stays within etcd's default request limit of 1.5 MiB. A longer key was
 * sent before: etcd refused the write ({@code request is too large}, or gRPC's
 * {@code RESOURCE_EXHAUSTED} further up), naming no key, and the clean-up retried deleting the
 * entry it had never written.
 */
class EtcdKeySizeIntegrationTests extends AbstractKeySizeLimitTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static Client client;

    private static Client peerClient;

    private static EtcdLockRegistry registry;

    private static EtcdLockRegistry peer;

    @BeforeAll
    static void startRegistries() {
        client = etcd.newClient();
        peerClient = etcd.newClient();
        registry = newRegistry(client, "registry");
        peer = newRegistry(peerClient, "peer");
    }

    private static EtcdLockRegistry newRegistry(Client etcdClient, String owner) {
        return EtcdLockRegistry.builder(etcdClient).namespace("/key-size/").leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner).endpoints(etcd.clientEndpoints()).build();
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
        return 200 * 1024;
    }

    @Override
    protected long sizeOf(String key) {
        return registry.keyspace().root(key).size();
    }
}
