package io.github.distlock.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A timed wait that runs out while the read after a wake-up is still under way (a slow network,
 * not a failing store): the lock was busy for the whole wait, so {@code tryLock} answers false, as
 * a try-once does, instead of throwing that etcd is unavailable and counting a store error.
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
        Client client = Client.builder().endpoints(endpoint).build();
        this.resources.add(client);
        EtcdLockRegistry registry = EtcdLockRegistry.builder(client).namespace(namespace).ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(5)).endpoints(List.of(endpoint)).build();
        this.resources.add(registry);
        return registry;
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
