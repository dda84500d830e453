package io.github.distlock.sample.orders;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.etcd.EtcdLockRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Payments through {@code POST /orders/{id}/pay} against a real etcd: idempotent under retries
 * and concurrency, 409 with the holder when the order's lock is held elsewhere, and fenced so
 * that a holder whose lock has passed on cannot overwrite newer data.
 */
@TestPropertySource(properties = "sample.orders.payment-time=50ms")
class OrderPaymentIntegrationTests extends AbstractSampleIntegrationTests {

    private static final AtomicInteger ids = new AtomicInteger();

    @Autowired
    OrderStore orders;

    @Autowired
    Client client;

    @Test
    void payingTwiceChargesOnce() {
        String id = newOrder();
        Reply first = this.http.post("/orders/" + id + "/pay");
        assertThat(first.status()).as(first.toString()).isEqualTo(200);
        assertThat((String) first.json("$.outcome")).isEqualTo("PAID");
        Reply second = this.http.post("/orders/" + id + "/pay");
        assertThat(second.status()).as(second.toString()).isEqualTo(200);
        assertThat((String) second.json("$.outcome")).isEqualTo("ALREADY_PAID");
        assertThat((String) second.json("$.paymentId")).isEqualTo(first.json("$.paymentId"));
        assertThat(((Number) second.json("$.fence")).longValue()).isEqualTo(((Number) first.json("$.fence")).longValue());
        Reply order = this.http.get("/orders/" + id);
        assertThat((String) order.json("$.status")).isEqualTo("PAID");
        assertThat((String) order.json("$.paidBy")).isEqualTo("test-instance");
    }

    @Test
    void concurrentPaymentsOfOneOrderPayItOnce() {
        String id = newOrder();
        List<CompletableFuture<Reply>> requests = IntStream.range(0, 8)
            .mapToObj(i -> this.http.postAsync("/orders/" + id + "/pay"))
            .toList();
        List<Reply> replies = requests.stream().map(request -> request.orTimeout(30, TimeUnit.SECONDS).join()).toList();
        assertThat(replies).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));
        assertThat(replies).extracting(reply -> (String) reply.json("$.outcome"))
            .containsOnlyOnce("PAID")
            .containsOnly("PAID", "ALREADY_PAID");
        assertThat(replies).extracting(reply -> (String) reply.json("$.paymentId")).containsOnly("pay-" + id + "-"
                + ((Number) replies.get(0).json("$.fence")).longValue());
    }

    @Test
    void paymentAnswers409WithTheHolderWhenTheLockIsHeldElsewhere() throws Exception {
        String id = newOrder();
        try (EtcdLockRegistry elsewhere = EtcdLockRegistry.builder(this.client)
            .namespace("/distributed-lock/")
            .ownerIdentity("billing-batch@elsewhere:42")
            .build()) {
            FencedLock lock = elsewhere.obtain(id, true);
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            Reply reply = this.http.post("/orders/" + id + "/pay");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            lock.unlock();
            assertThat(reply.status()).as(reply.toString()).isEqualTo(409);
            assertThat(reply.header("Content-Type")).isEqualTo("application/problem+json");
            assertThat((String) reply.json("$.code")).isEqualTo("lock-busy");
            assertThat((String) reply.json("$.key")).isEqualTo(id);
            assertThat((String) reply.json("$.holder")).startsWith("billing-batch@elsewhere:42");
            assertThat((String) reply.json("$.detail")).contains("billing-batch@elsewhere:42");
            // waitTimeout = "10s", and not much more: the request thread is never stuck.
            assertThat(took).isBetween(Duration.ofSeconds(10), Duration.ofSeconds(15));
        }
        assertThat(this.orders.find(id)).get().extracting(Order::status).isEqualTo(Order.Status.NEW);
        assertThat((String) this.http.post("/orders/" + id + "/pay").json("$.outcome")).isEqualTo("PAID");
    }

    @Test
    void writeWithAStaleFenceIsRejected() {
        String id = newOrder();
        Order order = this.orders.find(id).orElseThrow();
        this.orders.save(order.paid("pay-new", "instance-b", 200), 200);
        assertThatExceptionOfType(StaleFenceException.class)
            .isThrownBy(() -> this.orders.save(order.paid("pay-old", "instance-a", 150), 150))
            .satisfies(ex -> assertThat(ex.getStoredFence()).isEqualTo(200));
        assertThatExceptionOfType(StaleFenceException.class)
            .isThrownBy(() -> this.orders.save(order.paid("pay-same", "instance-a", 200), 200));
        assertThat(this.orders.find(id)).get().extracting(Order::paymentId).isEqualTo("pay-new");
    }

    @Test
    void holderThatLostItsLockCannotOverwriteTheNextHoldersWrite() throws Exception {
        String id = newOrder();
        Order order = this.orders.find(id).orElseThrow();
        EtcdLockRegistry paused = EtcdLockRegistry.builder(this.client).ownerIdentity("paused").build();
        FencedLock staleLock = paused.obtain(id, true);
        assertThat(staleLock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        long staleFence = staleLock.getFence();
        // The holder's session ends while it still works on the order (here: revoked; in life: a
        // GC pause or a partition longer than the lease TTL). The next holder gets the lock.
        paused.close();
        try (EtcdLockRegistry next = EtcdLockRegistry.builder(this.client).ownerIdentity("next").build()) {
            FencedLock lock = next.obtain(id, true);
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(lock.getFence()).isGreaterThan(staleFence);
            this.orders.save(order.paid("pay-next", "next", lock.getFence()), lock.getFence());
            lock.unlock();
        }
        assertThat(staleLock.isLockedByCurrentThread()).isFalse();
        assertThatExceptionOfType(StaleFenceException.class)
            .isThrownBy(() -> this.orders.save(order.paid("pay-stale", "paused", staleFence), staleFence));
        assertThat(this.orders.find(id)).get().extracting(Order::paymentId).isEqualTo("pay-next");
    }

    private String newOrder() {
        String id = "T" + ids.incrementAndGet() + "-" + System.nanoTime();
        assertThat(this.orders.create(Order.create(id, new BigDecimal("10.00")))).isTrue();
        return id;
    }
}
