package io.github.distlock.sample.web;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleHttp.Reply;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With etcd down, every endpoint answers 503 with a JSON problem body within a bounded time (no
 * request thread hangs), whether it reads data or waits for a lock; once etcd is back, requests
 * succeed again.
 */
@TestPropertySource(properties = "sample.flash-sale.wait-timeout=3s")
class EtcdUnavailableIntegrationTests extends AbstractSampleIntegrationTests {

    @Test
    void answers503WhileEtcdIsDownAndRecoversAfterwards() {
        assertThat(this.http.get("/orders/1001").status()).isEqualTo(200);
        SampleEtcd.cluster().member(0).stop();

        // Concurrently: a plain read, an unfair lock with a 3 s wait, a fair lock with a 10 s wait.
        CompletableFuture<Timed> read = timed(() -> this.http.get("/orders/1001"));
        CompletableFuture<Timed> buy = timed(() -> this.http.post("/items/sku-1/buy"));
        CompletableFuture<Timed> pay = timed(() -> this.http.post("/orders/1002/pay"));

        System.out.printf("503 after: read %d ms, buy %d ms, pay %d ms%n", read.join().took().toMillis(),
                buy.join().took().toMillis(), pay.join().took().toMillis());
        // Bounds: a read, sample.store.timeout (3 s); a lock, its wait timeout plus one etcd request
        // (distributed-lock.etcd.request-timeout, 5 s); and a margin for a loaded machine.
        assertUnavailable(read.join(), Duration.ofSeconds(3 + 2));
        assertUnavailable(buy.join(), Duration.ofSeconds(3 + 5 + 2));
        assertUnavailable(pay.join(), Duration.ofSeconds(10 + 5 + 2));

        SampleEtcd.cluster().member(0).restart();
        await().atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(500))
            .until(() -> this.http.get("/orders/1001").status() == 200);
        Reply paid = this.http.post("/orders/1002/pay");
        assertThat(paid.status()).as(paid.toString()).isEqualTo(200);
    }

    private static void assertUnavailable(Timed timed, Duration bound) {
        Reply reply = timed.reply();
        assertThat(reply.status()).as(reply.toString()).isEqualTo(503);
        assertThat(reply.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(reply.header("Retry-After")).isEqualTo("5");
        assertThat((String) reply.json("$.code")).isEqualTo("store-unavailable");
        assertThat((String) reply.json("$.detail")).contains("etcd");
        assertThat(timed.took()).isLessThan(bound);
    }

    private static CompletableFuture<Timed> timed(Supplier<Reply> request) {
        return CompletableFuture.supplyAsync(() -> {
            long start = System.nanoTime();
            Reply reply = request.get();
            return new Timed(reply, Duration.ofNanos(System.nanoTime() - start));
        }).orTimeout(60, TimeUnit.SECONDS);
    }

    private record Timed(Reply reply, Duration took) {
    }
}
