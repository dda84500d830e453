package io.github.distlock.health;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockHealthAutoConfiguration;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.TestDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.github.distlock.health.HealthProbes.isAlive;
import static io.github.distlock.health.HealthProbes.quickHealth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link JdbcLockRegistryHealthIndicator}, as the auto-configuration sets it up on the application's
 * DataSource, against a real PostgreSQL server that is killed and started again.
 */
class JdbcLockRegistryHealthIndicatorIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=jdbc", "distributed-lock.jdbc.initialize-schema=always",
                "distributed-lock.jdbc.lease-ttl=2s", "distributed-lock.jdbc.request-timeout=500ms",
                "spring.datasource.hikari.connection-timeout=1000", "spring.datasource.hikari.validation-timeout=500");

    @Test
    void upWhileTheDatabaseRunsDownWithAReasonOnceItIsKilledAndUpAgainOnceItIsBack() {
        try (TestDatabase database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL)) {
            this.contextRunner
                .withPropertyValues("spring.datasource.url=" + database.jdbcUrl(),
                        "spring.datasource.username=" + database.username(),
                        "spring.datasource.password=" + database.password())
                .run((context) -> {
                    HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                    assertThat(indicator).isInstanceOf(JdbcLockRegistryHealthIndicator.class);
                    await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                    assertThat(quickHealth(indicator).getDetails()).containsEntry("namespace", "DISTRIBUTED_LOCK_")
                        .containsEntry("leaseTtl", "2s")
                        .containsEntry("sessionAlive", true)
                        .containsKey("sessionRenewalAge");

                    database.server().kill();
                    await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                    Health down = quickHealth(indicator);
                    assertThat(down.getDetails()).containsEntry("sessionAlive", false)
                        .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                            .startsWith("the database session was lost: it was not renewed for ")
                            .contains("(TTL 2s)")
                            .endsWith("locks cannot be held until database is reachable again")
                            .doesNotContain(database.password()));

                    // Without any acquisition, the indicator's own reconnect makes it UP again.
                    database.server().restart();
                    await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                    FencedLock lock = context.getBean(JdbcLockRegistry.class).obtain("health-check");
                    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
                    lock.unlock();
                });
        }
    }
}
