package io.github.distlock.sample.sale;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.sample.SampleInstances;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flash sale on three instances sharing one etcd: 50 concurrent buyers spread over them buy
 * a stock of 5. With the lock, exactly 5 purchases succeed and the stock ends at 0; without it
 * (same requests, same read-then-write) the sale oversells.
 */
@ExtendWith(SampleEtcd.class)
class FlashSaleIntegrationTests {

    static final int STOCK = 5;

    static final int BUYERS = 50;

    @Test
    void fiftyBuyersOnThreeInstancesBuyExactlyTheStock() {
        try (SampleInstances instances = SampleInstances.start(3, SampleEtcd.endpoints(),
                "sample.report.enabled=false")) {
            List<Reply> replies = sale(instances, "locked-sku");

            assertThat(replies).filteredOn(reply -> reply.status() == 200).hasSize(STOCK);
            assertThat(replies).filteredOn(reply -> reply.status() == 409)
                .hasSize(BUYERS - STOCK)
                .allSatisfy(reply -> assertThat((String) reply.json("$.code")).isEqualTo("sold-out"));
            assertThat(replies).filteredOn(reply -> reply.status() == 200)
                .extracting(reply -> (int) reply.json("$.stockLeft"))
                .containsExactlyInAnyOrder(4, 3, 2, 1, 0);
            assertThat((int) instances.http(2).get("/items/locked-sku").json("$.stock")).isZero();
        }
    }

    @Test
    void withoutTheLockTheSameBuyersOversell() {
        try (SampleInstances instances = SampleInstances.start(3, SampleEtcd.endpoints(),
                "sample.report.enabled=false", "sample.flash-sale.lock-enabled=false")) {
            List<Reply> replies = sale(instances, "unlocked-sku");

            // Buyers read the same stock during each other's think time and all sell from it.
            long sold = replies.stream().filter(reply -> reply.status() == 200).count();
            assertThat(sold).isGreaterThan(STOCK);
            int stockLeft = instances.http(0).get("/items/unlocked-sku").json("$.stock");
            System.out.println("Without the lock: " + sold + " purchases from a stock of " + STOCK + ", stock now "
                    + stockLeft);
            assertThat(STOCK - stockLeft).as("decrements the stock shows").isLessThan((int) sold);
        }
    }

    /** Restocks {@code sku} to {@link #STOCK}, then sends {@link #BUYERS} purchases at once, round robin. */
    static List<Reply> sale(SampleInstances instances, String sku) {
        Reply restocked = instances.http(0).put("/items/" + sku + "/stock?quantity=" + STOCK);
        assertThat(restocked.status()).as(restocked.toString()).isEqualTo(200);
        List<CompletableFuture<Reply>> purchases = IntStream.range(0, BUYERS)
            .mapToObj(buyer -> instances.http(buyer % instances.size()).postAsync("/items/" + sku + "/buy"))
            .toList();
        List<Reply> replies = purchases.stream().map(purchase -> purchase.orTimeout(60, TimeUnit.SECONDS).join()).toList();
        assertThat(replies).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isIn(200, 409));
        return replies;
    }
}
