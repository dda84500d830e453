package io.github.distlock.sample.sale;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.sample.SampleInstances;
import io.github.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.Test;

import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.BUYERS;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.STOCK;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.sale;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on Redis instead of etcd, switched with {@code distributed-lock.store=redis} and
 * pointed at a real redis-server with the standard {@code spring.data.redis} connection (no etcd
 * runs): three instances share locks and data through it. The flash sale sells exactly its stock,
 * concurrent payments of one order pay it once (a fair lock and a fenced write), and health shows
 * the Redis lock registry.
 */
class FlashSaleOnRedisIntegrationTests {

    @Test
    void threeInstancesOnOneRedisSellExactlyTheStockAndPayAnOrderOnce() {
        try (RedisServer redis = RedisServer.start(false);
                SampleInstances instances = SampleInstances.startWith(3, "distributed-lock.store=redis",
                        "spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
                        "sample.report.enabled=false", "sample.orders.payment-time=50ms")) {
            List<Reply> replies = sale(instances, "redis-sku");
            assertThat(replies).filteredOn(reply -> reply.status() == 200)
                .extracting(reply -> (int) reply.json("$.stockLeft"))
                .containsExactlyInAnyOrder(4, 3, 2, 1, 0);
            assertThat(replies).filteredOn(reply -> reply.status() == 409).hasSize(BUYERS - STOCK);
            assertThat((int) instances.http(1).get("/items/redis-sku").json("$.stock")).isZero();
            // The data is in this Redis, under the sample's prefix.
            assertThat(redis.command("GET", "/sample/stock/redis-sku")).isEqualTo("0");

            // Order 1001 is seeded at start-up; every instance tries to pay it at once.
            List<CompletableFuture<Reply>> payments = IntStream.range(0, 6)
                .mapToObj(i -> instances.http(i % instances.size()).postAsync("/orders/1001/pay"))
                .toList();
            List<Reply> paid = payments.stream().map(payment -> payment.orTimeout(30, TimeUnit.SECONDS).join()).toList();
            assertThat(paid).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));
            assertThat(paid).extracting(reply -> (String) reply.json("$.outcome"))
                .containsOnlyOnce("PAID")
                .containsOnly("PAID", "ALREADY_PAID");
            long fence = ((Number) paid.get(0).json("$.fence")).longValue();
            assertThat(redis.command("GET", "/sample/orders/1001/fence")).isEqualTo(String.format("%019d", fence));

            Reply health = instances.http(2).get("/actuator/health");
            assertThat(health.status()).as(health.toString()).isEqualTo(200);
            assertThat((String) health.json("$.components.distributedLock.status")).isEqualTo("UP");
            assertThat((String) health.json("$.components.distributedLock.details.namespace"))
                .isEqualTo("distributed-lock:");
            assertThat((String) health.json("$.components.distributedLock.details.leaseTtl")).isEqualTo("10s");
        }
    }
}
