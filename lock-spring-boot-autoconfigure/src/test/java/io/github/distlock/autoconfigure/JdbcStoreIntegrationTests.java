package io.github.distlock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.health.JdbcLockRegistryHealthIndicator;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.JdbcRegistrySettings;
import io.github.distlock.jdbc.TestDatabase;
import io.github.distlock.testsupport.BackgroundAcquirer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code distributed-lock.store=jdbc} against a real PostgreSQL server, on the DataSource Spring
 * Boot builds from {@code spring.datasource.*} (HikariCP): locks through {@link LockRegistry}, health,
 * the meters and the {@code distributedlocks} endpoint, a clean shutdown that frees the locks at once,
 * and {@code initialize-schema=embedded} leaving a server database alone.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcStoreIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private static TestDatabase database;

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=jdbc", "distributed-lock.jdbc.initialize-schema=always");

    @BeforeAll
    static void startPostgresql() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopPostgresql() {
        if (database != null) {
            database.close();
        }
    }

    private ApplicationContextRunner onPostgresql() {
        return this.contextRunner.withPropertyValues("spring.datasource.url=" + database.jdbcUrl(),
                "spring.datasource.username=" + database.username(), "spring.datasource.password=" + database.password());
    }

    @Test
    void locksHealthMetersAndTheEndpointOnTheApplicationsDataSourceAndShutdownFreesTheLocks() {
        HeldLockObservations.withMetersAndEndpoint(onPostgresql()).run((context) -> {
            assertThat(context).hasNotFailed();
            HikariDataSource pool = (HikariDataSource) context.getBean(DataSource.class);
            assertThat(pool.getJdbcUrl()).isEqualTo(database.jdbcUrl());
            JdbcLockRegistry registry = context.getBean(JdbcLockRegistry.class);
            assertThat(context.getBean(LockRegistry.class)).isSameAs(registry);

            HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
            assertThat(indicator).isInstanceOf(JdbcLockRegistryHealthIndicator.class);
            await().atMost(LONG).until(() -> indicator.health().getStatus().equals(Status.UP));
            Health health = indicator.health();
            assertThat(health.getDetails()).containsEntry("namespace", "DISTRIBUTED_LOCK_")
                .containsEntry("leaseTtl", "10s")
                .containsEntry("sessionAlive", true)
                .containsKey("sessionRenewalAge");
            assertThat(health.toString()).doesNotContain(database.password()).doesNotContain("jdbc:");
            // Connected: on PostgreSQL, LISTEN/NOTIFY wakes waiters, and polling is only the safety net.
            assertThat(JdbcRegistrySettings.pollInterval(registry)).isEqualTo(Duration.ofSeconds(1));

            HeldLockObservations.assertShowAHeldLock(context, JdbcLockRegistry.class, "DISTRIBUTED_LOCK_");

            FencedLock lock = context.getBean(LockRegistry.class).obtain("orders/9");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(database.queryLong("SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isOne();
            assertThat(database.queryLong("SELECT COUNT(*) FROM DISTRIBUTED_LOCK_SESSION")).isOne();
            context.close();
            // Deleted by the registry as the application closed, before the pool: nothing waits for an expiry.
            assertThat(database.queryLong("SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isZero();
            assertThat(database.queryLong("SELECT COUNT(*) FROM DISTRIBUTED_LOCK_SESSION")).isZero();
            assertThat(lock.isLockedByCurrentThread()).isFalse();
            assertThat(pool.isClosed()).isTrue();
        });
    }

    @Test
    void anInstanceThatShutsDownHandsItsLockToAWaitingInstanceAtOnce() {
        // A lease TTL far above the wait: the waiter can only get the lock from the release at close.
        ApplicationContextRunner instances = onPostgresql().withPropertyValues(
                "distributed-lock.jdbc.table-prefix=handoff_", "distributed-lock.jdbc.lease-ttl=60s");
        instances.run((first) -> instances.run((second) -> {
            FencedLock held = first.getBean(LockRegistry.class).obtain("handoff");
            assertThat(held.tryLock(10, TimeUnit.SECONDS)).isTrue();
            long heldFence = held.getFence();
            CompletableFuture<Long> waiter = BackgroundAcquirer.acquireAndRelease(
                    second.getBean(LockRegistry.class).obtain("handoff"), LONG);
            await().atMost(LONG).until(() -> second.getBean(JdbcLockRegistry.class).getWaitingThreadCount() == 1);
            assertThat(waiter).isNotDone();
            long closedAt = System.nanoTime();
            first.close();
            long fence = waiter.get(LONG.toSeconds(), TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - closedAt)).isLessThan(Duration.ofSeconds(10));
            assertThat(fence).isGreaterThan(heldFence);
        }));
    }

    @Test
    void embeddedModeLeavesAServerDatabaseAlone(CapturedOutput output) {
        onPostgresql()
            .withPropertyValues("distributed-lock.jdbc.initialize-schema=embedded", "distributed-lock.jdbc.table-prefix=not_created_")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isFalse();
                assertThat(database.queryLong("SELECT COUNT(*) FROM information_schema.tables "
                        + "WHERE table_name LIKE 'not\\_created\\_%'")).isZero();
                await().atMost(LONG).untilAsserted(() -> assertThat(output)
                    .contains("The lock tables NOT_CREATED_* are missing"));
            });
    }
}
