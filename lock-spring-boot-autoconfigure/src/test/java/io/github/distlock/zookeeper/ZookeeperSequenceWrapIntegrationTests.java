package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.FencedLock;
import io.github.distlock.LockSnapshot;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.DataTree;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Locks whose node's sequence counter wrapped, on a real ZooKeeper server that starts from a
 * snapshot in which the lock nodes have had {@code Integer.MAX_VALUE - 1} children created (a
 * client would need years of polling to get there). From then on ZooKeeper 3.9 names every new
 * child with sequence {@value Integer#MAX_VALUE}, or, while creates are pipelined, with negative
 * sequences ({@code -2147483648}, eleven characters): entries still queue in the order they were
 * created, one holder at a time.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ZookeeperSequenceWrapIntegrationTests {

    private static final String NAMESPACE = "/wrapped";

    /**
     * Keys whose lock nodes are in the snapshot, with how many children were created in them: the
     * first entry of {@code exclusion} is created after the wrap already, that of {@code arrival-order}
     * just before it.
     */
    private static final Map<String, Integer> KEYS = Map.of("exclusion", Integer.MAX_VALUE, "arrival-order",
            Integer.MAX_VALUE - 1);

    private static final Duration LONG = Duration.ofSeconds(30);

    private static final int WAITERS = 6;

    private static ZooKeeperEnsemble zookeeper;

    private static CuratorFramework raw;

    private static final List<ZookeeperLockRegistry> registries = new CopyOnWriteArrayList<>();

    private static final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServerFromSnapshot() {
        ZookeeperKeyspace keyspace = new ZookeeperKeyspace(NAMESPACE);
        zookeeper = ZooKeeperEnsemble.standaloneStartingFrom(tree -> {
            long zxid = 1;
            create(tree, NAMESPACE, zxid++);
            for (Map.Entry<String, Integer> key : KEYS.entrySet()) {
                // A persistent node where the registry makes a container: the server would delete an empty
                // container (its check runs every minute) before a slow test created the first entry in it.
                create(tree, keyspace.lockNode(key.getKey()), zxid++);
                setCreatedChildren(tree, keyspace.lockNode(key.getKey()), key.getValue(), zxid++);
            }
            tree.lastProcessedZxid = zxid;
        });
        raw = ZookeeperTestClients.started(zookeeper);
    }

    private static void create(DataTree tree, String path, long zxid) {
        try {
            tree.createNode(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, 0, -1, zxid, System.currentTimeMillis());
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not create " + path + " in the snapshot", ex);
        }
    }

    /** The server keeps, as a node's cversion, how many children were ever created in it: the next sequence. */
    private static void setCreatedChildren(DataTree tree, String path, int created, long zxid) {
        try {
            tree.setCversionPzxid(path, created, zxid);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not set the children counter of " + path, ex);
        }
    }

    @AfterAll
    static void stopServer() {
        registries.forEach(ZookeeperLockRegistry::close);
        clients.forEach(CuratorFramework::close);
        if (raw != null) {
            raw.close();
        }
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    /** A thread per waiter: the common pool may have fewer threads than the tests have waiters. */
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        this.threads.shutdownNow();
    }

    private static ZookeeperLockRegistry newRegistry(String owner) {
        CuratorFramework client = ZookeeperTestClients.started(zookeeper);
        clients.add(client);
        ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client).namespace(NAMESPACE)
            .ownerIdentity(owner).description(zookeeper.toString()).build();
        registries.add(registry);
        return registry;
    }

    @Test
    void entriesCreatedAfterTheWrapWaitBehindTheHolderAndTakeTheLockOneAtATime() throws Exception {
        String key = "exclusion";
        ZookeeperLockRegistry holderRegistry = newRegistry("holder");
        ZookeeperLockRegistry waiterRegistry = newRegistry("waiters");
        ZookeeperLockRegistry pollerRegistry = newRegistry("poller");
        FencedLock holder = holderRegistry.obtain(key, true);
        assertThat(holder.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long holderFence = holder.getFence();
        Exclusion exclusion = new Exclusion();
        exclusion.enter();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        try {
            // Started at once, so their creates go out pipelined on one session: some get negative sequences.
            for (int i = 0; i < WAITERS; i++) {
                waiters.add(CompletableFuture.runAsync(() -> exclusion.holdBriefly(waiterRegistry.obtain(key, true)),
                        this.threads));
            }
            await().atMost(LONG).until(() -> exclusion.overlaps.get() > 0
                    || waiterRegistry.queuedWaiters(key) == WAITERS && entries(key).size() == WAITERS + 1);
            assertThat(exclusion.overlaps).as("waiters that took the lock while it was held").hasValue(0);
            assertThat(entries(key)).as("entries created after the wrap").allMatch(child -> isWrapped(child));
            // Each poll's entry gets the holder's sequence, or a negative one, and must find the holder ahead of it.
            FencedLock poller = pollerRegistry.obtain(key, true);
            for (int i = 0; i < 20; i++) {
                assertThat(poller.tryLock()).as("poll %s while the lock is held", i).isFalse();
            }
            assertThat(holder.isLockedByCurrentThread()).isTrue();
        }
        finally {
            exclusion.exit();
            holder.unlock();
        }
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(LONG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(exclusion.overlaps).as("waiters that held the lock at the same time").hasValue(0);
        assertThat(exclusion.fences).hasSize(WAITERS).allSatisfy(fence -> assertThat(fence).isGreaterThan(holderFence));
        assertThat(exclusion.fences).as("fences in the order the waiters held the lock").isSorted()
            .doesNotHaveDuplicates();
    }

    @Test
    void waitersQueuedAfterTheWrapAreServedAndListedInArrivalOrder() throws Exception {
        String key = "arrival-order";
        ZookeeperLockRegistry holderRegistry = newRegistry("holder");
        List<ZookeeperLockRegistry> waiterRegistries = List.of(newRegistry("first"), newRegistry("second"),
                newRegistry("third"));
        FencedLock holder = holderRegistry.obtain(key, true);
        assertThat(holder.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        List<String> served = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        List<String> arrivals = new ArrayList<>();
        try {
            for (int i = 0; i < WAITERS; i++) {
                ZookeeperLockRegistry registry = waiterRegistries.get(i % waiterRegistries.size());
                String name = "waiter-" + i;
                arrivals.add(registry.getOwnerIdentity() + "/" + name);
                int queuedBefore = entries(key).size();
                waiters.add(CompletableFuture.runAsync(() -> {
                    Thread.currentThread().setName(name);
                    FencedLock lock = registry.obtain(key, true);
                    lock.lock();
                    served.add(registry.getOwnerIdentity() + "/" + name);
                    lock.unlock();
                }, this.threads));
                await().atMost(LONG).until(() -> entries(key).size() == queuedBefore + 1);
            }
            assertThat(entries(key)).as("entries created after the wrap").filteredOn(child -> !isWrapped(child))
                .hasSize(1);
            LockSnapshot listed = holderRegistry.describeLock(key, 100);
            assertThat(listed.holder()).isNotNull();
            assertThat(listed.holder().owner()).isEqualTo("holder");
            assertThat(listed.waiters()).extracting(entry -> entry.owner() + "/" + entry.thread())
                .containsExactlyElementsOf(arrivals);
        }
        finally {
            holder.unlock();
        }
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(LONG.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(served).containsExactlyElementsOf(arrivals);
    }

    /** Counts the holders of a lock, and records their fences in the order they held it. */
    private static final class Exclusion {

        private final AtomicInteger inside = new AtomicInteger();

        private final AtomicInteger overlaps = new AtomicInteger();

        private final List<Long> fences = new CopyOnWriteArrayList<>();

        void enter() {
            if (this.inside.incrementAndGet() > 1) {
                this.overlaps.incrementAndGet();
            }
        }

        void exit() {
            this.inside.decrementAndGet();
        }

        void holdBriefly(FencedLock lock) {
            try {
                if (!lock.tryLock(LONG.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("not acquired within " + LONG);
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            try {
                enter();
                this.fences.add(lock.getFence());
                exit();
            }
            finally {
                lock.unlock();
            }
        }
    }

    /** The children of the key's lock node, as ZooKeeper named them. */
    private static List<String> entries(String key) throws Exception {
        return raw.getChildren().forPath(new ZookeeperKeyspace(NAMESPACE).lockNode(key));
    }

    /** Whether a child was created after the counter wrapped: ZooKeeper named it with the top or a negative sequence. */
    private static boolean isWrapped(String child) {
        return child.endsWith("-e-" + Integer.MAX_VALUE) || child.contains("-e--");
    }
}
