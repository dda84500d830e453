package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.AbstractLocalHandoffIntegrationTests;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs on etcd: the registry's watch tells a holder when another process queues behind
 * it, which ends a linger at once and passes after the window; a kept entry costs no etcd write.
 */
class EtcdLocalHandoffIntegrationTests extends AbstractLocalHandoffIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private final List<EtcdLockRegistry> registries = new CopyOnWriteArrayList<>();

    private final List<Client> clients = new CopyOnWriteArrayList<>();

    private Client rawClient;

    private String namespace;

    @BeforeEach
    void setUp() {
        this.namespace = "/handoff-" + UUID.randomUUID() + "/";
        this.rawClient = etcd.newClient();
    }

    @AfterEach
    void tearDown() {
        this.registries.forEach(EtcdLockRegistry::close);
        this.clients.forEach(Client::close);
        this.rawClient.close();
    }

    @Override
    protected EtcdLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        Client client = etcd.newClient();
        this.clients.add(client);
        EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(2))
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .endpoints(etcd.clientEndpoints())
            .build();
        this.registries.add(registry);
        return registry;
    }

    /**
     * Two threads of one process and a waiter of another: within the window the hold passes to
     * the local thread even though the other process waits; once the window is over, the
     * entry goes back to etcd and the other process comes first.
     */
    @Test
    void passesGoOnWithinTheWindowAndStopAfterIt() throws Exception {
        Duration window = Duration.ofSeconds(1);
        EtcdLockRegistry registry = newRegistry("me", new LocalHandoff(window, Duration.ZERO));
        EtcdLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        FencedLock first = registry.obtain(this.key);
        first.lock();
        long firstFence = first.getFence();
        CompletableFuture<Long> peerFence = new CompletableFuture<>();
        Future<?> peerWaiter = this.threads.submit(() -> {
            peerFence.complete(holdAndGetFence(peer.obtain(this.key, true), LONG));
            return null;
        });
        await().atMost(LONG).until(() -> peer.queuedWaiters(this.key) == 1);
        long peerQueuedAt = System.nanoTime();
        // Within the window: the local waiter gets a pass although the peer waits.
        CompletableFuture<Void> secondMayUnlock = new CompletableFuture<>();
        CompletableFuture<Long> secondFence = new CompletableFuture<>();
        Future<?> second = this.threads.submit(() -> {
            FencedLock lock = registry.obtain(this.key);
            lock.lock();
            try {
                secondFence.complete(lock.getFence());
                secondMayUnlock.get(LONG.toMillis(), MILLISECONDS);
            }
            finally {
                lock.unlock();
            }
            return null;
        });
        await().atMost(LONG).until(() -> registry.queuedWaiters(this.key) == 1);
        first.unlock();
        long passedFence = secondFence.get(LONG.toMillis(), MILLISECONDS);
        assumeTrue(System.nanoTime() - peerQueuedAt < window.toNanos(), "the pass came within the window");
        assertThat(passedFence).as("fence of the pass within the window").isEqualTo(firstFence + 1);
        // After the window (with a margin for the watch event that started it): a local waiter
        // queues, and the entry goes back to etcd, where the peer comes first.
        await().atMost(LONG).until(() -> System.nanoTime() - peerQueuedAt > window.multipliedBy(2).toNanos());
        Future<Long> third = this.threads.submit(() -> holdAndGetFence(registry.obtain(this.key), LONG));
        await().atMost(LONG).until(() -> registry.queuedWaiters(this.key) == 1);
        secondMayUnlock.complete(null);
        second.get(LONG.toMillis(), MILLISECONDS);
        long peerAcquired = peerFence.get(LONG.toMillis(), MILLISECONDS);
        peerWaiter.get(LONG.toMillis(), MILLISECONDS);
        long thirdFence = third.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerAcquired)).isGreaterThan(Fences.storeFence(passedFence));
        assertThat(Fences.storeFence(thirdFence)).as("the local waiter after the window went to etcd, behind the peer")
            .isGreaterThan(Fences.storeFence(peerAcquired));
        await().atMost(LONG).until(() -> kvs(this.key).isEmpty());
    }

    @Test
    void aKeptEntryLostWithItsSessionIsNotAHeldHoldLost() throws Exception {
        EtcdLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long firstFence = lock.getFence();
        lock.unlock();
        this.rawClient.getLeaseClient().revoke(kvs(this.key).get(0).getLease()).get(10, TimeUnit.SECONDS);
        await().atMost(LONG).until(() -> registry.getStatistics().getSessionsLost() == 1);
        // Dropped as soon as it was lost, not after the ten-minute linger.
        await().atMost(LONG).until(() -> !registry.hasStateFor(this.key));
        lock.lock();
        long secondFence = lock.getFence();
        assertThat(lock.isLockedByCurrentThread()).isTrue();
        lock.unlock();
        assertThat(Fences.pass(secondFence)).as("a new entry, not the lost one").isZero();
        assertThat(secondFence).isGreaterThan(firstFence);
        // etcd confirms an entry only by writing it: the first hold, unlocked while it was kept, may have
        // been struck by the loss as far as the process can tell, and is reported; the kept entry counts apart.
        assertThat(registry.getStatistics().getHoldsLost()).isOne();
        assertThat(registry.getStatistics().getKeptEntriesLost()).isOne();
        assertThat(registry.getStatistics().getLocalHandoffs()).isZero();
    }

    @Override
    protected void deleteEntriesBehindTheRegistrysBack(String key) throws Exception {
        this.rawClient.getKVClient()
            .delete(new EtcdKeyspace(this.namespace).root(key), DeleteOption.builder().isPrefix(true).build())
            .get(10, TimeUnit.SECONDS);
    }

    /** The entries' etcd keys with their create and mod revisions: a write changes them. */
    @Override
    protected List<String> entries(String key) throws Exception {
        return kvs(key).stream()
            .map(kv -> kv.getKey().toString(StandardCharsets.UTF_8) + "@" + kv.getCreateRevision() + "@"
                    + kv.getModRevision())
            .toList();
    }

    private List<KeyValue> kvs(String key) throws Exception {
        return this.rawClient.getKVClient()
            .get(new EtcdKeyspace(this.namespace).root(key), GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build())
            .get(10, TimeUnit.SECONDS).getKvs();
    }
}
