package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs of unfair locks on ZooKeeper: a kept entry costs no ZooKeeper call, and a children
 * watch tells a holder when another process queues behind it, which ends a linger at once. Every
 * linger here is far beyond the tests' bounds, so only that watch can end it in time.
 */
class ZookeeperLocalHandoffIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    /** Far beyond any test's bound: a test that waits for it fails. */
    private static final Duration FOREVER = Duration.ofMinutes(10);

    private static ZooKeeperEnsemble zookeeper;

    private static CuratorFramework raw;

    private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "zookeeper-handoff-test");
        thread.setDaemon(true);
        return thread;
    });

    private final List<ZookeeperLockRegistry> registries = new CopyOnWriteArrayList<>();

    private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

    private String namespace;

    private String key;

    @BeforeAll
    static void startZookeeper() {
        zookeeper = ZooKeeperEnsemble.standalone();
        raw = ZookeeperTestClients.started(zookeeper);
    }

    @AfterAll
    static void stopZookeeper() {
        raw.close();
        zookeeper.close();
    }

    @BeforeEach
    void setUp(TestInfo test) {
        this.namespace = "/handoff-" + UUID.randomUUID();
        this.key = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(LONG.toMillis(), MILLISECONDS);
        this.registries.forEach(ZookeeperLockRegistry::close);
        this.clients.forEach(CuratorFramework::close);
    }

    /** A registry on a client and session of its own, as another process would have. */
    private ZookeeperLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        CuratorFramework client = ZookeeperTestClients.started(zookeeper);
        this.clients.add(client);
        ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client)
            .namespace(this.namespace)
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .description(zookeeper.toString())
            .build();
        this.registries.add(registry);
        return registry;
    }

    @Test
    void aLingeringEntryServesTheNextAcquisitionWithoutAZookeeperWrite() throws Exception {
        ZookeeperLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long firstFence = lock.getFence();
        lock.unlock();
        List<String> lingering = queue(registry);
        assertThat(lingering).as("the lingering entry").hasSize(1);
        lock.lock();
        long secondFence = lock.getFence();
        lock.unlock();
        // A release and a new write would have left another node and drawn a new fence.
        assertThat(queue(registry)).as("the queue after a re-acquisition").isEqualTo(lingering);
        assertThat(secondFence).isEqualTo(firstFence + 1);
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(1);
    }

    @Test
    void anotherProcessQueueingBehindALingeringEntryEndsTheLingerAtOnce() throws Exception {
        ZookeeperLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        ZookeeperLockRegistry peer = newRegistry("peer", LocalHandoff.DEFAULT);
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long lingeringFence = lock.getFence();
        lock.unlock();
        assertThat(queue(registry)).as("the lingering entry").hasSize(1);
        // No try-once here, unlike on the other stores: its create ends the linger, and ZooKeeper may
        // apply the lingering entry's deletion before it serves the try-once's read of the queue.
        long peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG))
            .get(LONG.toMillis() * 2, MILLISECONDS);
        assertThat(Fences.storeFence(peerFence)).isGreaterThan(Fences.storeFence(lingeringFence));
        assertThat(Fences.pass(peerFence)).isZero();
        await().atMost(LONG).until(() -> queue(registry).isEmpty());
    }

    /**
     * The entry takes the key after waiting, with the peer already queued behind it: the read it
     * makes as the new holder shows the peer, and it does not linger in its way.
     */
    @Test
    void anEntryHandedTheKeyWithAnotherQueuedBehindItDoesNotLinger() throws Exception {
        ZookeeperLockRegistry first = newRegistry("first", LocalHandoff.DISABLED);
        ZookeeperLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        ZookeeperLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> mine = new CompletableFuture<>();
        this.threads.submit(() -> mine.complete(holdAndGetFence(registry.obtain(this.key), LONG)));
        await().atMost(LONG).until(() -> queue(registry).size() == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> queue(registry).size() == 3);
        firstLock.unlock();
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> queue(registry).isEmpty());
    }

    /**
     * As above, but the peer queues only after the entry took the key, while its holder is in
     * the critical section: the watch the holder's read left fires.
     */
    @Test
    void anEntryHandedTheKeyLearnsOfAPeerThatQueuesLater() throws Exception {
        ZookeeperLockRegistry first = newRegistry("first", LocalHandoff.DISABLED);
        ZookeeperLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        ZookeeperLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> myFence = new CompletableFuture<>();
        CompletableFuture<Void> mayUnlock = new CompletableFuture<>();
        this.threads.submit(() -> {
            FencedLock lock = registry.obtain(this.key);
            lock.lock();
            try {
                myFence.complete(lock.getFence());
                mayUnlock.get(LONG.toMillis(), MILLISECONDS);
            }
            finally {
                lock.unlock();
            }
            return null;
        });
        await().atMost(LONG).until(() -> queue(registry).size() == 2);
        firstLock.unlock();
        long mine = myFence.get(LONG.toMillis(), MILLISECONDS);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> queue(registry).size() == 2);
        mayUnlock.complete(null);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(mine));
        await().atMost(LONG).until(() -> queue(registry).isEmpty());
    }

    /** @return the entries' node names under the key's lock node, oldest first */
    private List<String> queue(ZookeeperLockRegistry registry) throws Exception {
        String lockNode = registry.keyspace().lockNode(this.key);
        if (raw.checkExists().forPath(lockNode) == null) {
            return List.of();
        }
        return ZookeeperLockStore.sortedEntries(raw.getChildren().forPath(lockNode));
    }

    private static long holdAndGetFence(FencedLock lock, Duration wait) throws InterruptedException {
        if (!lock.tryLock(wait.toMillis(), MILLISECONDS)) {
            throw new AssertionError("not acquired within " + wait);
        }
        try {
            return lock.getFence();
        }
        finally {
            lock.unlock();
        }
    }
}
