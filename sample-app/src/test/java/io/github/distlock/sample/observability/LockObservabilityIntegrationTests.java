package io.github.distlock.sample.observability;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.testsupport.JvmProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's actuator endpoints over HTTP while another process holds a lock and two threads of
 * this instance wait for it: {@code /actuator/distributedlocks}, {@code /actuator/health} and
 * {@code /actuator/metrics}.
 */
class LockObservabilityIntegrationTests extends AbstractSampleIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    private static final String KEY = "order-42";

    private static final String OTHER_OWNER = "other-instance@host-2:4242";

    private final ExecutorService waiters = Executors.newFixedThreadPool(2);

    @Autowired
    private EtcdLockRegistry registry;

    private JvmProcess holder;

    @AfterEach
    void stop() {
        this.waiters.shutdownNow();
        if (this.holder != null) {
            this.holder.close();
        }
    }

    @Test
    void showsTheHolderOfAnotherProcessAndTheWaitersInOrder() throws Exception {
        this.holder = JvmProcess.start(LockHolderMain.class, SampleEtcd.endpoints(), this.registry.getNamespace(),
                OTHER_OWNER, KEY);
        long holderFence = Long.parseLong(this.holder.awaitLine(line -> line.startsWith("HOLDING "), LONG)
            .substring("HOLDING ".length()));
        ConcurrentLinkedQueue<String> acquisitionOrder = new ConcurrentLinkedQueue<>();
        CompletableFuture<Long> first = waitFor("waiter-1", acquisitionOrder);
        await().atMost(LONG).until(() -> this.registry.getWaitingThreadCount() == 1);
        CompletableFuture<Long> second = waitFor("waiter-2", acquisitionOrder);
        await().atMost(LONG).until(() -> this.registry.getWaitingThreadCount() == 2);

        Reply lock = this.http.get("/actuator/distributedlocks/" + KEY);
        assertThat(lock.status()).as(lock.toString()).isEqualTo(200);
        assertThat(lock.<String>json("$.key")).isEqualTo(KEY);
        assertThat(lock.<String>json("$.holder.owner")).isEqualTo(OTHER_OWNER);
        assertThat(lock.<String>json("$.holder.thread")).isEqualTo("main");
        assertThat(lock.<Number>json("$.holder.fence").longValue()).isEqualTo(holderFence);
        assertThat(lock.<Number>json("$.holder.leaseTimeToLiveSeconds").longValue()).isBetween(0L, 10L);
        assertThat(Instant.parse(lock.json("$.holder.queuedAt"))).isBefore(Instant.now().plusSeconds(5));
        assertThat(lock.<List<String>>json("$.waiters[*].thread")).containsExactly("waiter-1", "waiter-2");
        assertThat(lock.<List<String>>json("$.waiters[*].owner")).containsOnly(this.registry.getOwnerIdentity());
        List<Number> waiterFences = lock.json("$.waiters[*].fence");
        assertThat(waiterFences.get(0).longValue()).isGreaterThan(holderFence);
        assertThat(waiterFences.get(1).longValue()).isGreaterThan(waiterFences.get(0).longValue());
        assertThat(lock.<String>json("$.waiters[0].leaseId")).isEqualTo(lock.json("$.waiters[1].leaseId"))
            .isNotEqualTo(lock.json("$.holder.leaseId"));

        Reply all = this.http.get("/actuator/distributedlocks");
        assertThat(all.status()).as(all.toString()).isEqualTo(200);
        assertThat(all.<String>json("$.namespace")).isEqualTo(this.registry.getNamespace());
        assertThat(all.<Boolean>json("$.truncated")).isFalse();
        List<Map<String, Object>> listed = all.json("$.locks[?(@.key == '" + KEY + "')]");
        assertThat(listed).hasSize(1);
        assertThat(all.<List<String>>json("$.locks[?(@.key == '" + KEY + "')].holder.owner"))
            .containsExactly(OTHER_OWNER);
        assertThat(all.<List<String>>json("$.locks[?(@.key == '" + KEY + "')].waiters[*].thread"))
            .containsExactly("waiter-1", "waiter-2");

        Reply health = this.http.get("/actuator/health");
        assertThat(health.<String>json("$.components.distributedLock.status")).as(health.toString()).isEqualTo("UP");
        assertThat(health.<Boolean>json("$.components.distributedLock.details.sessionAlive")).isTrue();
        assertThat(metric("distributed.lock.waiting")).isEqualTo(2.0);
        double acquiredBefore = metric("distributed.lock.acquisitions?tag=outcome:acquired");

        this.holder.sendLine("release");
        this.holder.awaitLine("RELEASED"::equals, LONG);
        assertThat(first.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(waiterFences.get(0).longValue());
        assertThat(second.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(waiterFences.get(1).longValue());
        assertThat(acquisitionOrder).containsExactly("waiter-1", "waiter-2");
        assertThat(metric("distributed.lock.waiting")).isZero();
        assertThat(metric("distributed.lock.acquisitions?tag=outcome:acquired")).isEqualTo(acquiredBefore + 2);

        Reply free = this.http.get("/actuator/distributedlocks/" + KEY);
        // Actuator leaves null fields out: a free lock has no holder field.
        assertThat(free.<Map<String, Object>>json("$")).as(free.toString()).containsEntry("key", KEY)
            .doesNotContainKey("holder");
        assertThat(free.<List<Object>>json("$.waiters")).isEmpty();
    }

    private double metric(String nameAndQuery) {
        Reply reply = this.http.get("/actuator/metrics/" + nameAndQuery);
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.<Number>json("$.measurements[0].value").doubleValue();
    }

    private CompletableFuture<Long> waitFor(String threadName, ConcurrentLinkedQueue<String> acquisitionOrder) {
        return CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().setName(threadName);
            FencedLock lock = this.registry.obtain(KEY, true);
            try {
                if (!lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException(threadName + " did not get the lock within " + LONG);
                }
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            try {
                acquisitionOrder.add(threadName);
                return lock.getFence();
            }
            finally {
                lock.unlock();
            }
        }, this.waiters);
    }
}
