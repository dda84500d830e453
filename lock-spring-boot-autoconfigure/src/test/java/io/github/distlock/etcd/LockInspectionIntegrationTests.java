package io.github.distlock.etcd;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LockSnapshot;
import io.github.distlock.LockStatistics;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * What {@link EtcdLockRegistry} tells operators, against a real etcd: who holds and who waits
 * (read from etcd, across registries), and its running statistics and gauges.
 */
class LockInspectionIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    private static final Duration TTL = Duration.ofSeconds(5);

    private final ExecutorService waiters = Executors.newCachedThreadPool();

    private Client holderClient;

    private Client waiterClient;

    private EtcdLockRegistry holderRegistry;

    private EtcdLockRegistry waiterRegistry;

    @BeforeEach
    void setUp() {
        String namespace = "/inspect-" + UUID.randomUUID() + "/";
        this.holderClient = etcd.newClient();
        this.waiterClient = etcd.newClient();
        this.holderRegistry = registry(this.holderClient, namespace, "holder@host-1:11");
        this.waiterRegistry = registry(this.waiterClient, namespace, "waiter@host-2:22");
    }

    @AfterEach
    void tearDown() {
        this.waiters.shutdownNow();
        this.holderRegistry.close();
        this.waiterRegistry.close();
        this.holderClient.close();
        this.waiterClient.close();
    }

    private static EtcdLockRegistry registry(Client client, String namespace, String owner) {
        return EtcdLockRegistry.builder(client)
            .namespace(namespace)
            .leaseTtl(TTL)
            .ownerIdentity(owner)
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @Test
    void describesTheHolderAndTheWaitersInTheOrderTheyWillBeServed() throws Exception {
        String key = "orders/42%";
        Instant before = Instant.now();
        FencedLock held = this.holderRegistry.obtain(key, true);
        held.lock();
        try {
            CompletableFuture<Long> first = waitInThread(key, "waiter-a");
            await().atMost(LONG).until(() -> this.waiterRegistry.getWaitingThreadCount() == 1);
            CompletableFuture<Long> second = waitInThread(key, "waiter-b");
            await().atMost(LONG).until(() -> this.waiterRegistry.getWaitingThreadCount() == 2);

            // Any registry of the namespace sees the same queue, whoever wrote it.
            LockSnapshot lock = this.waiterRegistry.describeLock(key, 100);
            assertThat(lock.key()).isEqualTo(key);
            LockSnapshot.Entry holder = lock.holder();
            assertThat(holder.owner()).isEqualTo("holder@host-1:11");
            assertThat(holder.thread()).isEqualTo(Thread.currentThread().getName());
            assertThat(holder.fence()).isEqualTo(held.getFence());
            assertThat(holder.queuedAt()).isBetween(before.minusSeconds(1), Instant.now().plusSeconds(1));
            assertThat(holder.leaseId()).isEqualTo(Long.toHexString(this.holderRegistry.liveLeaseId()));
            assertThat(holder.leaseTimeToLive()).isNotNull().isBetween(Duration.ZERO, TTL);
            assertThat(lock.waiters()).extracting(LockSnapshot.Entry::thread).containsExactly("waiter-a", "waiter-b");
            assertThat(lock.waiters()).extracting(LockSnapshot.Entry::owner).containsOnly("waiter@host-2:22");
            assertThat(lock.waiters().get(0).fence()).isGreaterThan(holder.fence());
            assertThat(lock.waiters().get(1).fence()).isGreaterThan(lock.waiters().get(0).fence());

            assertThat(this.holderRegistry.getHeldLockCount()).isEqualTo(1);
            assertThat(this.waiterRegistry.getHeldLockCount()).isZero();
            held.unlock();
            assertThat(first.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(lock.waiters().get(0).fence());
            assertThat(second.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(lock.waiters().get(1).fence());
        }
        finally {
            if (held.isLockedByCurrentThread()) {
                held.unlock();
            }
        }
        LockSnapshot free = this.holderRegistry.describeLock(key, 100);
        assertThat(free.holder()).isNull();
        assertThat(free.waiters()).isEmpty();
        assertThat(this.waiterRegistry.getWaitingThreadCount()).isZero();
        assertThat(this.waiterRegistry.getStatistics().getAcquired()).isEqualTo(2);
    }

    @Test
    void listsEveryHeldLockOfTheNamespaceByKey() throws Exception {
        List<String> keys = List.of("b", "a/b", "%2F", "x y");
        for (String key : keys) {
            this.holderRegistry.obtain(key).lock();
        }
        NamespaceSnapshot all = this.waiterRegistry.describeLocks(100);
        assertThat(all.namespace()).isEqualTo(this.holderRegistry.getNamespace());
        assertThat(all.truncated()).isFalse();
        assertThat(all.revision()).isGreaterThanOrEqualTo(Fences.storeFence(all.locks().get(0).holder().fence()));
        assertThat(all.locks()).extracting(LockSnapshot::key).containsExactly("%2F", "a/b", "b", "x y");
        assertThat(all.locks()).allSatisfy(lock -> {
            assertThat(lock.holder().owner()).isEqualTo("holder@host-1:11");
            assertThat(lock.waiters()).isEmpty();
        });
        assertThat(this.holderRegistry.getHeldLockCount()).isEqualTo(4);

        NamespaceSnapshot partial = this.waiterRegistry.describeLocks(2);
        assertThat(partial.truncated()).isTrue();
        assertThat(partial.locks()).hasSize(2);
        for (String key : keys) {
            this.holderRegistry.obtain(key).unlock();
        }
        assertThat(this.waiterRegistry.describeLocks(100).locks()).isEmpty();
        assertThat(this.holderRegistry.getHeldLockCount()).isZero();
    }

    @Test
    void countsTimeoutsSeparatelyFromAcquisitions() throws Exception {
        FencedLock held = this.holderRegistry.obtain("busy");
        held.lock();
        try {
            assertThat(this.waiterRegistry.obtain("busy").tryLock()).isFalse();
            assertThat(this.waiterRegistry.obtain("busy", true).tryLock(50, TimeUnit.MILLISECONDS)).isFalse();
        }
        finally {
            held.unlock();
        }
        LockStatistics statistics = this.waiterRegistry.getStatistics();
        assertThat(statistics.getTimedOut()).isEqualTo(2);
        assertThat(statistics.getAcquired()).isZero();
        assertThat(statistics.getFailed()).isZero();
        assertThat(this.holderRegistry.getStatistics().getAcquired()).isEqualTo(1);
        // Reentering a held lock is not another acquisition.
        FencedLock lock = this.waiterRegistry.obtain("busy");
        lock.lock();
        lock.lock();
        lock.unlock();
        lock.unlock();
        assertThat(statistics.getAcquired()).isEqualTo(1);
    }

    @Test
    void rejectsBadArgumentsAndReportsAnUnreachableEtcd() {
        assertThatIllegalArgumentException().isThrownBy(() -> this.holderRegistry.describeLock("", 10))
            .withMessageContaining("empty");
        assertThatIllegalArgumentException().isThrownBy(() -> this.holderRegistry.describeLock(null, 10))
            .withMessageContaining("null");
        assertThatIllegalArgumentException().isThrownBy(() -> this.holderRegistry.describeLocks(0))
            .withMessageContaining("maxEntries must be positive, but was 0");
        etcd.cluster().member(0).stop();
        try {
            assertThatIllegalStateException().isThrownBy(() -> this.holderRegistry.describeLocks(10))
                .withMessageContaining("Could not read the locks under '" + this.holderRegistry.getNamespace() + "'")
                .withMessageContaining(etcd.cluster().clientEndpoint());
        }
        finally {
            etcd.cluster().ensureAllRunning();
        }
    }

    @Test
    void aReadCutShortByMaxEntriesStillNamesTheOldestEntryAsTheHolder() throws Exception {
        // Entry keys start with the lease id: let the registry whose entries sort last hold, so that
        // a read in key order would name the waiter.
        this.holderRegistry.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
        this.waiterRegistry.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
        boolean holderSortsLast = Long.compareUnsigned(this.holderRegistry.liveLeaseId(),
                this.waiterRegistry.liveLeaseId()) > 0;
        EtcdLockRegistry first = holderSortsLast ? this.holderRegistry : this.waiterRegistry;
        EtcdLockRegistry second = holderSortsLast ? this.waiterRegistry : this.holderRegistry;
        String key = "cut-short";
        FencedLock held = first.obtain(key, true);
        held.lock();
        try {
            CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
                FencedLock lock = second.obtain(key, true);
                try {
                    boolean acquired = lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS);
                    if (acquired) {
                        lock.unlock();
                    }
                    return acquired;
                }
                catch (InterruptedException ex) {
                    throw new IllegalStateException(ex);
                }
            }, this.waiters);
            await().atMost(LONG).until(() -> second.getWaitingThreadCount() == 1);

            String holder = first.getOwnerIdentity() + "/" + Thread.currentThread().getName();
            assertThat(second.describeLock(key, 1).holder().describe()).isEqualTo(holder);
            assertThat(second.describeLocks(1).locks()).singleElement()
                .satisfies(lock -> assertThat(lock.holder().describe()).isEqualTo(holder));
            assertThat(second.obtain(key).getHolder()).isEqualTo(holder);
            held.unlock();
            assertThat(waiting.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        }
        finally {
            if (held.isLockedByCurrentThread()) {
                held.unlock();
            }
        }
    }

    private CompletableFuture<Long> waitInThread(String key, String threadName) {
        return CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().setName(threadName);
            FencedLock lock = this.waiterRegistry.obtain(key, true);
            try {
                if (!lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException(threadName + " timed out");
                }
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            long fence = lock.getFence();
            lock.unlock();
            return fence;
        }, this.waiters);
    }
}
