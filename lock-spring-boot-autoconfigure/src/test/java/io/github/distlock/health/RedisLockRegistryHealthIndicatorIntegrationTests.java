package io.github.distlock.health;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockHealthAutoConfiguration;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.github.distlock.health.HealthProbes.isAlive;
import static io.github.distlock.health.HealthProbes.quickHealth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisLockRegistryHealthIndicator}, as the auto-configuration sets it up, against a real
 * redis-server that is killed and started again.
 */
class RedisLockRegistryHealthIndicatorIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=redis", "distributed-lock.redis.lease-ttl=1s",
                "distributed-lock.redis.request-timeout=500ms", "spring.data.redis.timeout=1s",
                "spring.data.redis.connect-timeout=1s");

    @Test
    void upWhileRedisRunsDownWithAReasonOnceItIsKilledAndUpAgainOnceItIsBack() {
        try (RedisServer redis = RedisServer.start(false)) {
            this.contextRunner
                .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
                .run((context) -> {
                    HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                    assertThat(indicator).isInstanceOf(RedisLockRegistryHealthIndicator.class);
                    await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                    assertThat(quickHealth(indicator).getDetails()).containsEntry("namespace", "distributed-lock:")
                        .containsEntry("leaseTtl", "1s")
                        .containsEntry("sessionAlive", true)
                        .containsKey("sessionRenewalAge")
                        .doesNotContainKey("grantedLeaseTtl");

                    redis.kill();
                    await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                    Health down = quickHealth(indicator);
                    assertThat(down.getDetails()).containsEntry("sessionAlive", false)
                        .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                            .startsWith("the Redis session was lost: it was not renewed for ")
                            .contains("(TTL 1s)")
                            .endsWith("locks cannot be held until Redis is reachable again"));

                    // Without any acquisition, the indicator's own reconnect makes it UP again.
                    redis.restart();
                    await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                    FencedLock lock = context.getBean(RedisLockRegistry.class).obtain("health-check");
                    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
                    lock.unlock();
                });
        }
    }

    @Test
    void downWithAReasonButNoPasswordWhenRedisCannotBeConnectedTo() {
        int closedPort = 1; // nothing listens on a privileged port
        this.contextRunner.withPropertyValues("spring.data.redis.url=redis://app:s3cret-value@127.0.0.1:" + closedPort)
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                Health down = quickHealth(indicator);
                assertThat(down.getDetails()).containsEntry("session", "not started")
                    .containsEntry("leaseTtl", "1s")
                    .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                        .startsWith("could not connect to the lock store: ")
                        .endsWith("retrying in the background")
                        .doesNotContain("s3cret-value"));
                // Later probes neither wait for the attempt they start nor flap while it runs.
                for (int i = 0; i < 5; i++) {
                    assertThat(quickHealth(indicator).getStatus()).isEqualTo(Status.DOWN);
                }
            });
    }
}
