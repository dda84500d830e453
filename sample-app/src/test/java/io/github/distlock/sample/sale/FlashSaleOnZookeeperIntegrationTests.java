package io.github.distlock.sample.sale;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.sample.SampleInstances;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.Test;

import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.BUYERS;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.STOCK;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.sale;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on ZooKeeper instead of etcd, switched with {@code distributed-lock.store=zookeeper}
 * and pointed at a real ZooKeeper server with {@code distributed-lock.zookeeper.connect-string}
 * (no etcd runs): three instances share locks and data through it. The flash sale sells exactly
 * its stock, concurrent payments of one order pay it once (a fair lock and a fenced write), and
 * health shows the ZooKeeper lock registry.
 */
class FlashSaleOnZookeeperIntegrationTests {

    @Test
    void threeInstancesOnOneZookeeperSellExactlyTheStockAndPayAnOrderOnce() throws Exception {
        try (ZooKeeperEnsemble zookeeper = ZooKeeperEnsemble.standalone();
                SampleInstances instances = SampleInstances.startWith(3, "distributed-lock.store=zookeeper",
                        "distributed-lock.zookeeper.connect-string=" + zookeeper.connectString(),
                        "distributed-lock.zookeeper.session-timeout=6s", "sample.report.enabled=false",
                        "sample.orders.payment-time=50ms");
                CuratorFramework client = CuratorFrameworkFactory.newClient(zookeeper.connectString(), 6_000, 5_000,
                        new ExponentialBackoffRetry(100, 3))) {
            client.start();
            List<Reply> replies = sale(instances, "zookeeper-sku");
            assertThat(replies).filteredOn(reply -> reply.status() == 200)
                .extracting(reply -> (int) reply.json("$.stockLeft"))
                .containsExactlyInAnyOrder(4, 3, 2, 1, 0);
            assertThat(replies).filteredOn(reply -> reply.status() == 409).hasSize(BUYERS - STOCK);
            assertThat((int) instances.http(1).get("/items/zookeeper-sku").json("$.stock")).isZero();
            // The data is in this ZooKeeper, in children of the sample's znode.
            assertThat(read(client, "/sample/stock%2Fzookeeper-sku")).isEqualTo("0");

            // Order 1001 is seeded at start-up; every instance tries to pay it at once.
            List<CompletableFuture<Reply>> payments = IntStream.range(0, 6)
                .mapToObj(i -> instances.http(i % instances.size()).postAsync("/orders/1001/pay"))
                .toList();
            List<Reply> paid = payments.stream().map(payment -> payment.orTimeout(30, TimeUnit.SECONDS).join()).toList();
            assertThat(paid).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));
            assertThat(paid).extracting(reply -> (String) reply.json("$.outcome"))
                .containsOnlyOnce("PAID")
                .containsOnly("PAID", "ALREADY_PAID");
            // The fence is the lock entry's creation zxid; the fenced write stored it next to the order.
            long fence = ((Number) paid.get(0).json("$.fence")).longValue();
            assertThat(fence).isPositive();
            assertThat(read(client, "/sample/orders%2F1001%2Ffence")).isEqualTo(Long.toString(fence));
            assertThat(read(client, "/sample/orders%2F1001")).contains("\"status\":\"PAID\"");

            Reply health = instances.http(2).get("/actuator/health");
            assertThat(health.status()).as(health.toString()).isEqualTo(200);
            assertThat((String) health.json("$.components.distributedLock.status")).isEqualTo("UP");
            assertThat((String) health.json("$.components.distributedLock.details.namespace"))
                .isEqualTo("/distributed-lock");
            assertThat((String) health.json("$.components.distributedLock.details.sessionTimeout")).isEqualTo("6s");
        }
    }

    private static String read(CuratorFramework client, String path) throws Exception {
        return new String(client.getData().forPath(path), StandardCharsets.UTF_8);
    }
}
