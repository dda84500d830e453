package io.github.distlock.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * etcd answering slower than one attempt of a call that is sent again (a slow network or disk, not
 * a failing store). A timed wait that runs out while the read after a wake-up is still under way:
 * the lock was busy for the whole wait, so {@code tryLock} answers false, as a try-once does,
 * instead of throwing that etcd is unavailable and counting a store error. A release or a queue
 * read whose every answer comes after its attempt's time: the first answer of any attempt counts.
 */
class SlowReadIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    /** Each way, so a round trip through the proxy takes at least twice this. */
    private static final Duration LATENCY = Duration.ofMillis(400);

    private static final Duration WAIT = Duration.ofSeconds(8);

    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    private EtcdLockRegistry registry(String endpoint, String namespace, String owner) {
        return registry(endpoint, namespace, owner, EtcdLockRegistry.DEFAULT_LEASE_TTL);
    }

    private EtcdLockRegistry registry(String endpoint, String namespace, String owner, Duration leaseTtl) {
        Client client = Client.builder().endpoints(endpoint).build();
        this.resources.add(client);
        EtcdLockRegistry registry = EtcdLockRegistry.builder(client).namespace(namespace).ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(5)).leaseTtl(leaseTtl).endpoints(List.of(endpoint)).build();
        this.resources.add(registry);
        return registry;
    }

    /** A round trip through the proxy (400 ms and more) outlasts an attempt (250 ms with a 5 s request timeout). */
    private static final Duration SLOWER_THAN_AN_ATTEMPT = Duration.ofMillis(200);

    @Test
    void aReleaseWhoseEveryAnswerComesAfterItsAttemptIsConfirmedByTheFirst() throws Exception {
        String namespace = "/slow-release-" + UUID.randomUUID() + "/";
        TcpProxy proxy = TcpProxy.start(etcd.clientEndpoints().get(0));
        this.resources.add(proxy);
        EtcdLockRegistry observer = registry(etcd.clientEndpoints().get(0), namespace, "observer");
        EtcdLockRegistry slow = registry(proxy.endpoint(), namespace, "slow");
        assertThat(slow.connect()).succeedsWithin(LONG);
        proxy.delay(SLOWER_THAN_AN_ATTEMPT);
        FencedLock lock = slow.obtain("released", true);
        lock.lock();
        long unlockStart = System.nanoTime();
        lock.unlock();
        long unlockMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - unlockStart);
        // Before, every attempt gave up on its own answer: unlock() returned after the whole request
        // timeout (5 s) with a WARN, and the background delete retried for as long as the session lived.
        assertThat(unlockMillis).as("unlock, ms").isLessThan(4_000);
        assertThat(slow.getStatistics().getBackendErrors()).as("store errors").isZero();
        // A write attempt etcd applies after the release (each was sent again, and the slow link may
        // deliver one late) leaves a key of the lease, deleted once its answer comes (or swept meanwhile).
        await().atMost(LONG).until(() -> observer.describeLock("released", 10).holder() == null);
    }

    @Test
    void aQueueReadWhoseEveryAnswerComesAfterItsAttemptCountsTheFirst() throws Exception {
        String namespace = "/slow-reread-" + UUID.randomUUID() + "/";
        TcpProxy proxy = TcpProxy.start(etcd.clientEndpoints().get(0));
        this.resources.add(proxy);
        EtcdLockRegistry holder = registry(etcd.clientEndpoints().get(0), namespace, "holder");
        // A 3 s lease: the waiter reads the queue again after 3 s without news, whatever the watch says
        // (and its keep-alives, every second, have time for the slow round trips).
        EtcdLockRegistry slow = registry(proxy.endpoint(), namespace, "slow", Duration.ofSeconds(3));
        assertThat(slow.connect()).succeedsWithin(LONG);
        FencedLock held = holder.obtain("reread", true);
        held.lock();
        proxy.delay(SLOWER_THAN_AN_ATTEMPT);
        CompletableFuture<Long> acquired = BackgroundAcquirer.acquireAndRelease(slow.obtain("reread", true), LONG);
        await().atMost(LONG).until(() -> holder.describeLock("reread", 10).waiters().size() == 1);
        long queued = System.nanoTime();
        // Its safety re-read (a lease TTL after its write) is under way or over by now: from then on
        // only a read, never the watch alone, makes it the holder.
        await().atMost(LONG).until(() -> System.nanoTime() - queued >= TimeUnit.SECONDS.toNanos(5));
        held.unlock();
        // Before, each read's answer came after its attempt had given up: the waiter never took the free lock.
        assertThat(acquired).as("acquired after the release").succeedsWithin(Duration.ofSeconds(30));
        assertThat(slow.getStatistics().getBackendErrors()).as("store errors").isZero();
    }

    @Test
    void aWaitThatEndsDuringTheReadAfterAWakeUpAnswersFalseWithoutAStoreError() throws Exception {
        String namespace = "/slow-read-" + UUID.randomUUID() + "/";
        TcpProxy proxy = TcpProxy.start(etcd.clientEndpoints().get(0));
        this.resources.add(proxy);
        EtcdLockRegistry holder = registry(etcd.clientEndpoints().get(0), namespace, "holder");
        EtcdLockRegistry slow = registry(proxy.endpoint(), namespace, "slow");
        assertThat(slow.connect()).succeedsWithin(LONG);
        FencedLock held = holder.obtain("slow", true);
        held.lock();
        proxy.delay(LATENCY);

        long start = System.nanoTime();
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                FencedLock lock = slow.obtain("slow", true);
                boolean acquired = lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (acquired) {
                    lock.unlock();
                }
                outcome.complete(acquired);
            }
            catch (Throwable ex) {
                outcome.complete(ex);
            }
        }, "slow-waiter");
        waiter.start();
        await().atMost(LONG).until(() -> holder.describeLock("slow", 10).waiters().size() == 1);
        // Released so that the waiter is woken (the watch event crosses the proxy once) before its
        // wait ends, but its read (a round trip, twice the latency) cannot finish before it does.
        long releaseAt = start + WAIT.toNanos() - 2 * LATENCY.toNanos();
        assertThat(System.nanoTime()).as("the waiter queued in time").isLessThan(releaseAt);
        await().atMost(LONG).pollInterval(Duration.ofMillis(5)).until(() -> System.nanoTime() - releaseAt >= 0);
        held.unlock();

        assertThat(outcome.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Boolean.FALSE);
        assertThat(slow.getStatistics().getBackendErrors()).isZero();
        proxy.delay(Duration.ZERO);
        await().atMost(LONG).until(() -> holder.describeLock("slow", 10).holder() == null);
    }
}
