package io.github.distlock.sample.sale;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.sample.SampleInstances;
import io.github.distlock.testsupport.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.BUYERS;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.STOCK;
import static io.github.distlock.sample.sale.FlashSaleIntegrationTests.sale;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on a SQL database instead of etcd, switched with {@code distributed-lock.store=jdbc}
 * and pointed at a private PostgreSQL server with the standard {@code spring.datasource} connection
 * (no etcd runs): three instances keep their locks in the lock tables, which
 * {@code initialize-schema=always} creates, and their data in the sample's table of the same
 * database. The flash sale sells exactly its stock, concurrent payments of one order pay it once (a
 * fair lock and a fenced write, whose fence the database stores next to the order), and health shows
 * the JDBC lock registry. With a lock namespace (table prefix) of its own per instance, the same
 * sale oversells: the shared lock tables, not the database, make it exact.
 */
class FlashSaleOnPostgresIntegrationTests {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    private static String[] onPostgres(String... more) {
        List<String> properties = new java.util.ArrayList<>(List.of("distributed-lock.store=jdbc",
                "spring.datasource.url=" + postgres.jdbcUrl(), "spring.datasource.username=" + postgres.username(),
                "spring.datasource.password=" + postgres.password(), "distributed-lock.jdbc.initialize-schema=always",
                "sample.report.enabled=false", "sample.orders.payment-time=50ms"));
        properties.addAll(List.of(more));
        return properties.toArray(String[]::new);
    }

    @Test
    void threeInstancesOnOnePostgresSellExactlyTheStockAndPayAnOrderOnce() throws Exception {
        try (SampleInstances instances = SampleInstances.startWith(3, onPostgres("distributed-lock.jdbc.lease-ttl=6s"))) {
            List<Reply> replies = sale(instances, "postgres-sku");
            assertThat(replies).filteredOn(reply -> reply.status() == 200)
                .extracting(reply -> (int) reply.json("$.stockLeft"))
                .containsExactlyInAnyOrder(4, 3, 2, 1, 0);
            assertThat(replies).filteredOn(reply -> reply.status() == 409).hasSize(BUYERS - STOCK);
            assertThat((int) instances.http(1).get("/items/postgres-sku").json("$.stock")).isZero();
            // The data is in this database, in the sample's table, at the prefix and path.
            assertThat(row("/sample/stock/postgres-sku").value()).isEqualTo("0");

            // Order 1001 is seeded at start-up; every instance tries to pay it at once.
            List<CompletableFuture<Reply>> payments = IntStream.range(0, 6)
                .mapToObj(i -> instances.http(i % instances.size()).postAsync("/orders/1001/pay"))
                .toList();
            List<Reply> paid = payments.stream().map(payment -> payment.orTimeout(30, TimeUnit.SECONDS).join()).toList();
            assertThat(paid).allSatisfy(reply -> assertThat(reply.status()).as(reply.toString()).isEqualTo(200));
            assertThat(paid).extracting(reply -> (String) reply.json("$.outcome"))
                .containsOnlyOnce("PAID")
                .containsOnly("PAID", "ALREADY_PAID");
            // The fence is the lock entry's identity value; the fenced write stored it in the order's row.
            long fence = ((Number) paid.get(0).json("$.fence")).longValue();
            assertThat(fence).isPositive();
            Row order = row("/sample/orders/1001");
            assertThat(order.fence()).isEqualTo(fence);
            assertThat(order.value()).contains("\"status\":\"PAID\"");

            // One live session row per instance, in the tables initialize-schema=always created.
            assertThat(queryLong("SELECT COUNT(*) FROM DISTRIBUTED_LOCK_SESSION")).isEqualTo(3);
            Reply health = instances.http(2).get("/actuator/health");
            assertThat(health.status()).as(health.toString()).isEqualTo(200);
            assertThat((String) health.json("$.components.distributedLock.status")).isEqualTo("UP");
            assertThat((String) health.json("$.components.distributedLock.details.namespace"))
                .isEqualTo("DISTRIBUTED_LOCK_");
            assertThat((String) health.json("$.components.distributedLock.details.leaseTtl")).isEqualTo("6s");
            assertThat(health.toString()).doesNotContain(postgres.password());
        }
    }

    @Test
    void withALockNamespaceOfItsOwnPerInstanceTheSameBuyersOversell() {
        try (SampleInstances instances = SampleInstances.startEach(3,
                (instance) -> List.of("distributed-lock.jdbc.table-prefix=ISOLATED_" + instance + "_"), onPostgres())) {
            List<Reply> replies = sale(instances, "isolated-sku");

            // Each instance serializes its own buyers, but buyers of different instances read the same stock.
            long sold = replies.stream().filter(reply -> reply.status() == 200).count();
            assertThat(sold).isGreaterThan(STOCK);
            int stockLeft = instances.http(0).get("/items/isolated-sku").json("$.stock");
            System.out.println("Without a shared lock namespace: " + sold + " purchases from a stock of " + STOCK
                    + ", stock now " + stockLeft);
            assertThat(STOCK - stockLeft).as("decrements the stock shows").isLessThan((int) sold);
        }
    }

    private record Row(String value, Long fence) {
    }

    private static Row row(String path) throws SQLException {
        try (Connection connection = postgres.connect();
                PreparedStatement statement = connection.prepareStatement(
                        "SELECT VAL, FENCE FROM SAMPLE_DATA WHERE PATH = ?")) {
            statement.setString(1, path);
            try (ResultSet rows = statement.executeQuery()) {
                assertThat(rows.next()).as("a row at " + path).isTrue();
                long fence = rows.getLong(2);
                return new Row(rows.getString(1), rows.wasNull() ? null : fence);
            }
        }
    }

    private static long queryLong(String sql) throws SQLException {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            assertThat(rows.next()).isTrue();
            return rows.getLong(1);
        }
    }
}
