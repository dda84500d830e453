package io.github.distlock.health;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockHealthAutoConfiguration;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static io.github.distlock.health.HealthProbes.isAlive;
import static io.github.distlock.health.HealthProbes.quickHealth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link ZookeeperLockRegistryHealthIndicator}, as the auto-configuration sets it up, against a
 * real ZooKeeper server that is killed and started again.
 */
class ZookeeperLockRegistryHealthIndicatorIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=zookeeper", "distributed-lock.zookeeper.session-timeout=3s",
                "distributed-lock.zookeeper.connection-timeout=1s", "distributed-lock.zookeeper.request-timeout=1s");

    @Test
    void upWhileZookeeperRunsDownWithAReasonOnceItIsKilledAndUpAgainOnceItIsBack() {
        this.contextRunner.withPropertyValues("distributed-lock.zookeeper.connect-string=" + zookeeper.connectString())
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                assertThat(indicator).isInstanceOf(ZookeeperLockRegistryHealthIndicator.class);
                await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                assertThat(quickHealth(indicator).getDetails()).containsEntry("namespace", "/distributed-lock")
                    .containsEntry("sessionTimeout", "3s")
                    .containsEntry("sessionAlive", true)
                    .containsKey("sessionRenewalAge")
                    .doesNotContainKey("leaseTtl")
                    .doesNotContainKey("reason");

                zookeeper.ensemble().member(0).kill();
                await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                Health down = quickHealth(indicator);
                assertThat(down.getDetails()).containsEntry("sessionAlive", false)
                    .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                        .startsWith("the ZooKeeper session was lost: ")
                        .endsWith("locks cannot be held until ZooKeeper is reachable again")
                        .doesNotContain(zookeeper.connectString()));

                // Without any acquisition, the indicator's own reconnect makes it UP again.
                zookeeper.ensemble().member(0).restart();
                await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
                FencedLock lock = context.getBean(ZookeeperLockRegistry.class).obtain("health-check");
                assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
                lock.unlock();
            });
    }

    @Test
    void downWithAReasonWhenZookeeperCannotBeConnectedTo() {
        int closedPort = 1; // nothing listens on a privileged port
        this.contextRunner.withPropertyValues("distributed-lock.zookeeper.connect-string=127.0.0.1:" + closedPort)
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                Health down = quickHealth(indicator);
                assertThat(down.getDetails()).containsEntry("session", "not started")
                    .doesNotContainKey("sessionTimeout")
                    .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                        .startsWith("could not connect to the lock store: ")
                        .endsWith("retrying in the background"));
            });
    }

    @Test
    void switchedOffWithTheHealthProperty() {
        this.contextRunner
            .withPropertyValues("distributed-lock.zookeeper.connect-string=" + zookeeper.connectString(),
                    "management.health.distributed-lock.enabled=false")
            .run((context) -> assertThat(context).hasSingleBean(ZookeeperLockRegistry.class)
                .doesNotHaveBean("distributedLockHealthIndicator"));
    }
}
