package io.github.distlock.health;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockHealthAutoConfiguration;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
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
 * {@link EtcdLockRegistryHealthIndicator} against a real etcd that goes away and comes back.
 */
class EtcdLockRegistryHealthIndicatorIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class))
        .withPropertyValues("distributed-lock.etcd.lease-ttl=1", "distributed-lock.etcd.connect-timeout=1s",
                "distributed-lock.etcd.request-timeout=1s");

    @AfterEach
    void restoreCluster() {
        etcd.cluster().ensureAllRunning();
    }

    @Test
    void downWhileTheSessionIsLostAndUpAgainOnceEtcdIsBack() {
        EtcdCluster cluster = etcd.cluster();
        this.contextRunner.withPropertyValues("distributed-lock.etcd.endpoints=" + cluster.clientEndpoint())
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                await().atMost(LONG).until(() -> isAlive(indicator.health()));
                assertThat(indicator.health().getDetails()).containsEntry("namespace", "/distributed-lock/")
                    .containsEntry("leaseTtl", "1s")
                    // etcd's minimum TTL, which is what bounds a crashed holder.
                    .containsEntry("grantedLeaseTtl", "2s")
                    .containsKey("sessionRenewalAge");

                cluster.member(0).stop();
                await().atMost(LONG).until(() -> indicator.health().getStatus().equals(Status.DOWN));
                Health down = indicator.health();
                assertThat(down.getDetails()).containsEntry("sessionAlive", false)
                    .hasEntrySatisfying("reason",
                            (reason) -> assertThat(reason).asString().contains("session was lost")
                                // The granted TTL: the one that bounds a crashed holder.
                                .contains("(TTL 2s)"));

                // Without any acquisition, the indicator's own reconnect makes it UP again.
                cluster.member(0).restart();
                await().atMost(LONG).until(() -> isAlive(indicator.health()));
                FencedLock lock = context.getBean(EtcdLockRegistry.class).obtain("health-check");
                // In this thread: the lock belongs to the thread that took it.
                await().atMost(LONG).pollInSameThread().ignoreExceptions()
                    .until(() -> lock.tryLock(5, TimeUnit.SECONDS));
                lock.unlock();
                await().atMost(LONG).until(() -> isAlive(indicator.health()));
            });
    }

    @Test
    void unknownWhileConnectingThenUpBeforeTheFirstAcquisition() {
        try (Client client = etcd.cluster().newClient();
                EtcdLockRegistry registry = EtcdLockRegistry.builder(client).build()) {
            EtcdLockRegistryHealthIndicator indicator = new EtcdLockRegistryHealthIndicator(registry);
            Health first = quickHealth(indicator);
            // The first probe starts the connect attempt, which may finish before it answers.
            if (!first.getStatus().equals(Status.UP)) {
                assertThat(first.getStatus()).isEqualTo(Status.UNKNOWN);
                assertThat(first.getDetails()).containsEntry("session", "connecting");
            }
            assertThat(first.getDetails()).containsEntry("namespace", "/distributed-lock/")
                .containsEntry("leaseTtl", "10s");
            await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
        }
    }

    @Test
    void downWithAReasonWithoutEndpointsIfEtcdCannotBeConnectedTo() {
        try (Client client = Client.builder().endpoints("http://127.0.0.1:1").build();
                EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
                    .requestTimeout(Duration.ofMillis(500))
                    .build()) {
            EtcdLockRegistryHealthIndicator indicator = new EtcdLockRegistryHealthIndicator(registry);
            await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
            assertThat(quickHealth(indicator).getDetails()).containsEntry("session", "not started")
                .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                    .contains("lease grant")
                    .endsWith("retrying in the background")
                    .doesNotContain("127.0.0.1"));
        }
    }

    @Test
    void probesAnswerAtOnceWhileEtcdIsUnreachableAndUpOnceItIsBack() {
        EtcdCluster cluster = etcd.cluster();
        cluster.member(0).stop();
        // A long connect timeout: probes must not wait for it, nor for the 1 s request timeout.
        this.contextRunner
            .withPropertyValues("distributed-lock.etcd.endpoints=" + cluster.clientEndpoint(),
                    "distributed-lock.etcd.connect-timeout=5s")
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                Health first = quickHealth(indicator);
                assertThat(first.getStatus()).isIn(Status.UNKNOWN, Status.DOWN);
                if (first.getStatus().equals(Status.UNKNOWN)) {
                    assertThat(first.getDetails()).containsEntry("session", "connecting");
                }
                await().atMost(LONG).until(() -> quickHealth(indicator).getStatus().equals(Status.DOWN));
                Health down = quickHealth(indicator);
                assertThat(down.getDetails()).containsEntry("session", "not started")
                    .hasEntrySatisfying("reason", (reason) -> assertThat(reason).asString()
                        .startsWith("could not connect to the lock store: ")
                        .doesNotContain(cluster.clientEndpoint().substring("http://".length())));
                // Later probes neither wait for the attempt they start nor flap while it runs.
                for (int i = 0; i < 5; i++) {
                    assertThat(quickHealth(indicator).getStatus()).isEqualTo(Status.DOWN);
                }

                cluster.member(0).restart();
                await().atMost(LONG).until(() -> isAlive(quickHealth(indicator)));
            });
    }
}
