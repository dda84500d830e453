package io.github.distlock.fault;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.core.Fences;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * etcd restarts (SIGTERM, then started again on its data directory) faster than the lease TTL:
 * etcd restores leases on restart, so holds survive (README, "When etcd is down"), calls made
 * while it is down end within their bounds (G10), and waiting resumes once it is back.
 */
@FaultInjectionTest
class EtcdRestartIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration TTL = Duration.ofSeconds(10);

    private static final Duration LONG = Duration.ofSeconds(30);

    private String namespace;

    private Client holderClient;

    private Client waiterClient;

    private Client rawClient;

    private EtcdLockRegistry holderRegistry;

    private EtcdLockRegistry waiterRegistry;

    @BeforeEach
    void setUp() {
        this.namespace = "/fault-restart-" + UUID.randomUUID() + "/";
        this.holderClient = etcd.newClient();
        this.waiterClient = etcd.newClient();
        this.rawClient = etcd.newClient();
        this.holderRegistry = newRegistry(this.holderClient, "holder");
        this.waiterRegistry = newRegistry(this.waiterClient, "waiter");
    }

    @AfterEach
    void tearDown() {
        // A failed test may have left the member down: the next test needs it.
        etcd.cluster().ensureAllRunning();
        this.holderRegistry.close();
        this.waiterRegistry.close();
        this.holderClient.close();
        this.waiterClient.close();
        this.rawClient.close();
    }

    private EtcdLockRegistry newRegistry(Client client, String owner) {
        return EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(TTL)
            .ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(2))
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @Test
    void holdSurvivesAnEtcdRestartShorterThanTheLeaseTtlAndTheWaiterGetsTheLockAfterwards() throws Exception {
        String key = "restart";
        FencedLock held = this.holderRegistry.obtain(key, true);
        held.lock();
        long holderFence = held.getFence();
        CompletableFuture<Long> waiter = new CompletableFuture<>();
        Thread waiterThread = new Thread(() -> {
            FencedLock lock = this.waiterRegistry.obtain(key, true);
            try {
                if (!lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    waiter.completeExceptionally(new IllegalStateException("not acquired within " + LONG));
                    return;
                }
                long fence = lock.getFence();
                lock.unlock();
                waiter.complete(fence);
            }
            catch (Throwable ex) {
                waiter.completeExceptionally(ex);
            }
        }, "waiter");
        waiterThread.start();
        await().atMost(LONG).until(() -> entries(key) == 2);

        etcd.cluster().member(0).stop();
        long downAt = System.nanoTime();

        // While etcd is down, another thread's tryLock(1 s) ends within its bound: false or an exception.
        CompletableFuture<Object> whileDown = new CompletableFuture<>();
        Thread downThread = new Thread(() -> {
            long start = System.nanoTime();
            Object outcome;
            try {
                outcome = this.holderRegistry.obtain(key, true).tryLock(1, TimeUnit.SECONDS);
            }
            catch (Throwable ex) {
                outcome = ex;
            }
            whileDown.complete(new Object[] { outcome, Duration.ofNanos(System.nanoTime() - start) });
        }, "while-down");
        downThread.start();
        Object[] result = (Object[]) whileDown.get(LONG.toSeconds(), TimeUnit.SECONDS);
        Object outcome = result[0];
        Duration took = (Duration) result[1];
        assertThat(outcome).satisfiesAnyOf(o -> assertThat(o).isEqualTo(Boolean.FALSE),
                o -> assertThat(o).isInstanceOf(LockAcquisitionException.class));
        // The bound is 1 s; allow a loaded machine 2 s more, far below a hang.
        assertThat(took).isLessThan(Duration.ofSeconds(3));
        assertThat(held.isLockedByCurrentThread()).isTrue();

        etcd.cluster().member(0).restart();
        Duration outage = Duration.ofNanos(System.nanoTime() - downAt);
        assertThat(outage).as("etcd outage (must stay well below the lease TTL for this test)")
            .isLessThan(TTL.minusSeconds(3));
        // The holder's lease and entry are back with etcd's data.
        await().atMost(LONG).ignoreExceptions().until(() -> entryCreatedAt(Fences.storeFence(holderFence)));
        // The while-down attempt's write may reach etcd once it is back (jetcd waits for a ready
        // channel): its acquisition gave up, so the registry deletes that late entry again (the
        // check for no entry at the end covers one that arrives after this).
        await().atMost(LONG).until(() -> entries(key) == 2);
        // Wait until the holder's client talks to etcd again (a read of a free key goes to etcd).
        FencedLock probe = this.holderRegistry.obtain("probe", true);
        await().atMost(LONG).ignoreExceptions().until(() -> !probe.isLocked());

        assertThat(held.isLockedByCurrentThread()).isTrue();
        assertThat(held.getFence()).isEqualTo(holderFence);
        assertThat(waiter).isNotDone();
        held.unlock();
        assertThat(waiter.get(LONG.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(holderFence);

        waiterThread.join(LONG.toMillis());
        downThread.join(LONG.toMillis());
        assertThat(waiterThread.isAlive()).isFalse();
        assertThat(downThread.isAlive()).isFalse();
        await().atMost(LONG).until(() -> entries(key) == 0);
    }

    private boolean entryCreatedAt(long revision) throws Exception {
        ByteSequence prefix = ByteSequence.from(this.namespace, StandardCharsets.UTF_8);
        return this.rawClient.getKVClient()
            .get(prefix, GetOption.builder().isPrefix(true).build())
            .get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getKvs()
            .stream()
            .anyMatch(kv -> kv.getCreateRevision() == revision);
    }

    private long entries(String key) throws Exception {
        ByteSequence prefix = ByteSequence.from(this.namespace, StandardCharsets.UTF_8);
        return this.rawClient.getKVClient()
            .get(prefix, GetOption.builder().isPrefix(true).withCountOnly(true).build())
            .get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getCount();
    }
}
