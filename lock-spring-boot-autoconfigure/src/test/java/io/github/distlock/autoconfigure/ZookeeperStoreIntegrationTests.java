package io.github.distlock.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockRegistry;
import io.github.distlock.LockSnapshot;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.Locked;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.LockedService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.OwnRegistry;
import io.github.distlock.testsupport.Delegation;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code distributed-lock.store=zookeeper} against a real ZooKeeper server: the registry on a
 * Curator client built from the properties or on the application's own, the properties and their
 * checks, digest authentication, shutdown, the meters and the endpoint, and a clear start-up
 * failure without Curator.
 */
@ExtendWith(OutputCaptureExtension.class)
class ZookeeperStoreIntegrationTests {

    private static final String SECRET = "s3cret-value";

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework observer;

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=zookeeper", "distributed-lock.zookeeper.request-timeout=2s");

    @BeforeAll
    static void startObserver() throws InterruptedException {
        observer = started(zookeeper.connectString(), null);
    }

    @AfterAll
    static void stopObserver() {
        if (observer != null) {
            observer.close();
        }
    }

    private ApplicationContextRunner onZookeeper() {
        return this.contextRunner.withPropertyValues("distributed-lock.zookeeper.connect-string=" + zookeeper.connectString());
    }

    @Test
    void locksOnAClientBuiltFromTheProperties() {
        onZookeeper().withUserConfiguration(LockedService.class).run((context) -> {
            assertThat(context).hasSingleBean(LockRegistry.class)
                .hasSingleBean(ZookeeperLockRegistry.class)
                .hasSingleBean(CuratorFramework.class)
                .hasBean("distributedLockCuratorFramework")
                .hasSingleBean(DistributedLockAdvisor.class);
            ZookeeperLockRegistry registry = context.getBean(ZookeeperLockRegistry.class);
            assertThat(registry.getNamespace()).isEqualTo("/distributed-lock");
            assertThat(registry.getOwnerIdentity()).endsWith(":" + ProcessHandle.current().pid());
            CuratorFramework curator = context.getBean(CuratorFramework.class);
            assertThat(curator.getZookeeperClient().getCurrentConnectionString()).isEqualTo(zookeeper.connectString());
            assertThat(curator.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(5_000);

            FencedLock lock = registry.obtain("orders/7");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            try {
                LockSnapshot snapshot = registry.describeLock("orders/7", 10);
                assertThat(snapshot.holder()).isNotNull();
                assertThat(snapshot.holder().owner()).isEqualTo(registry.getOwnerIdentity());
                assertThat(snapshot.holder().thread()).isEqualTo(Thread.currentThread().getName());
                assertThat(snapshot.holder().fence()).isEqualTo(lock.getFence());
                // In this very ZooKeeper, under the namespace, on the session of the client built here.
                List<Stat> entries = entries("/distributed-lock");
                assertThat(entries).hasSize(1);
                assertThat(entries.get(0).getEphemeralOwner())
                    .isEqualTo(curator.getZookeeperClient().getZooKeeper().getSessionId());
            }
            finally {
                lock.unlock();
            }
            assertThat(registry.describeLock("orders/7", 10).holder()).isNull();
            assertThat(entries("/distributed-lock")).isEmpty();
            assertThat(context.getBean(Locked.class).key()).isEqualTo("locked");
        });
    }

    @Test
    void metersAndTheEndpointShowAHeldZookeeperLock() {
        HeldLockObservations.withMetersAndEndpoint(onZookeeper())
            .run((context) -> HeldLockObservations.assertShowAHeldLock(context, ZookeeperLockRegistry.class, "/distributed-lock"));
    }

    @Test
    void bindsTheZookeeperProperties() {
        onZookeeper()
            .withPropertyValues("distributed-lock.zookeeper.namespace=/billing/locks",
                    "distributed-lock.zookeeper.session-timeout=4s", "distributed-lock.zookeeper.connection-timeout=3s",
                    "distributed-lock.zookeeper.request-timeout=750ms", "distributed-lock.owner-identity=billing-7")
            .run((context) -> {
                DistributedLockProperties.Zookeeper properties = context.getBean(DistributedLockProperties.class)
                    .getZookeeper();
                assertThat(properties.toString()).contains("namespace = '/billing/locks'", "sessionTimeout = '4000ms'",
                        "connectionTimeout = '3000ms'", "requestTimeout = '750ms'");
                CuratorFramework curator = context.getBean(CuratorFramework.class);
                assertThat(curator.getZookeeperClient().getConnectionTimeoutMs()).isEqualTo(3_000);
                ZookeeperLockRegistry registry = context.getBean(ZookeeperLockRegistry.class);
                assertThat(registry.getNamespace()).isEqualTo("/billing/locks");
                FencedLock lock = registry.obtain("invoice");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                    assertThat(registry.describeLock("invoice", 10).holder().owner()).isEqualTo("billing-7");
                    assertThat(entries("/billing/locks")).hasSize(1);
                    // ZooKeeper granted what was asked for (its tick of 500 ms allows 1 s to 10 s).
                    assertThat(registry.getSessionTimeout()).isEqualTo(Duration.ofSeconds(4));
                }
                finally {
                    lock.unlock();
                }
            });
    }

    @Test
    void defaultsAreTheRegistrysDefaults() {
        DistributedLockProperties.Zookeeper defaults = new DistributedLockProperties().getZookeeper();
        assertThat(defaults.getConnectString()).isEqualTo("127.0.0.1:2181");
        assertThat(defaults.getNamespace()).isEqualTo(ZookeeperLockRegistry.DEFAULT_NAMESPACE);
        assertThat(defaults.getRequestTimeout()).isEqualTo(ZookeeperLockRegistry.DEFAULT_REQUEST_TIMEOUT);
        assertThat(defaults.getSessionTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.getConnectionTimeout()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aSessionTimeoutZookeeperDoesNotGrantIsReportedOnce(CapturedOutput output) {
        // The test ensemble ticks every 500 ms: it grants at most 20 ticks, 10 s.
        onZookeeper().withPropertyValues("distributed-lock.zookeeper.session-timeout=30s").run((context) -> {
            ZookeeperLockRegistry registry = context.getBean(ZookeeperLockRegistry.class);
            for (int i = 0; i < 2; i++) {
                FencedLock lock = registry.obtain("granted-" + i);
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                lock.unlock();
            }
            assertThat(registry.getSessionTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(output).containsOnlyOnce("granted a session timeout of 10000 ms instead of the 30000 ms asked for");
        });
    }

    @Test
    void aSessionTimeoutRaisedToTheServersLeastAsksForThreeTicks(CapturedOutput output) {
        // The test ensemble ticks every 500 ms: it grants at least 2 ticks, 1 s.
        onZookeeper().withPropertyValues("distributed-lock.zookeeper.session-timeout=600ms").run((context) -> {
            ZookeeperLockRegistry registry = context.getBean(ZookeeperLockRegistry.class);
            FencedLock lock = registry.obtain("raised");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            lock.unlock();
            assertThat(registry.getSessionTimeout()).isEqualTo(Duration.ofSeconds(1));
            assertThat(output).containsOnlyOnce("granted a session timeout of 1000 ms instead of the 600 ms asked for")
                .contains("ask for at least three ticks (1500 ms)");
        });
    }

    @Test
    void startUpSaysAtInfoWhichStoreTheLocksUseAndWhere(CapturedOutput output) {
        onZookeeper().withPropertyValues("distributed-lock.zookeeper.session-timeout=20s").run((context) -> {
            List<String> lines = output.getAll().lines().filter((line) -> line.contains("Distributed locks use")).toList();
            assertThat(lines).as("start-up lines about the store").hasSize(1);
            assertThat(lines.get(0)).contains("INFO").endsWith("Distributed locks use ZooKeeper at "
                    + zookeeper.connectString() + ", namespace '/distributed-lock', session timeout 20s");
        });
        this.contextRunner.withUserConfiguration(OwnCurator.class)
            .run((context) -> assertThat(output).contains("Distributed locks use ZooKeeper at " + zookeeper.connectString()
                    + ", namespace '/distributed-lock', session timeout set by the application's CuratorFramework"));
    }

    @Test
    void theApplicationsCuratorClientIsUsedAsIs() {
        // The connect string points nowhere: only the application's client reaches ZooKeeper.
        this.contextRunner.withPropertyValues("distributed-lock.zookeeper.connect-string=127.0.0.1:1")
            .withUserConfiguration(OwnCurator.class)
            .run((context) -> {
                CuratorFramework own = context.getBean(OwnCurator.class).curator;
                assertThat(context).hasSingleBean(CuratorFramework.class).doesNotHaveBean("distributedLockCuratorFramework");
                assertThat(context.getBean(CuratorFramework.class)).isSameAs(own);
                FencedLock lock = context.getBean(LockRegistry.class).obtain("own-client");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                    List<Stat> entries = entries("/distributed-lock");
                    assertThat(entries).hasSize(1);
                    assertThat(entries.get(0).getEphemeralOwner())
                        .isEqualTo(own.getZookeeperClient().getZooKeeper().getSessionId());
                }
                finally {
                    lock.unlock();
                }
            });
    }

    @Test
    void closingTheApplicationReleasesItsLocksBeforeItsClientCloses() {
        this.contextRunner.withUserConfiguration(OwnCurator.class).run((context) -> {
            OwnCurator configuration = context.getBean(OwnCurator.class);
            CuratorFramework own = configuration.curator;
            FencedLock lock = context.getBean(LockRegistry.class).obtain("shutdown");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(entries("/distributed-lock")).hasSize(1);
            context.close();
            // The registry deleted its entry while the application's client was still open (the
            // client, closed next, would otherwise have ended the session with the entry in it).
            assertThat(configuration.entriesWhenClosed).isZero();
            assertThat(entries("/distributed-lock")).isEmpty();
            assertThat(lock.isLockedByCurrentThread()).isFalse();
            assertThat(own.getState().name()).isEqualTo("STOPPED");
        });
    }

    @Test
    void badPropertiesFailStartUpNamingPropertyAndValue() {
        assertStartUpFails("distributed-lock.zookeeper.namespace=distributed-lock",
                "distributed-lock.zookeeper.namespace must be an absolute path", "'distributed-lock'");
        assertStartUpFails("distributed-lock.zookeeper.namespace=/locks/",
                "distributed-lock.zookeeper.namespace must be an absolute path", "'/locks/'");
        assertStartUpFails("distributed-lock.zookeeper.namespace=/orders#eu",
                "distributed-lock.zookeeper.namespace must not contain '#'", "'/orders#eu'");
        assertStartUpFails("distributed-lock.zookeeper.session-timeout=0",
                "distributed-lock.zookeeper.session-timeout must be positive, but is '0ms'");
        assertStartUpFails("distributed-lock.zookeeper.session-timeout=1500100us",
                "distributed-lock.zookeeper.session-timeout must be a whole number of milliseconds, but is '1500100us'");
        assertStartUpFails("distributed-lock.zookeeper.session-timeout=30d",
                "distributed-lock.zookeeper.session-timeout must be at most 24 days, but is '30d'");
        assertStartUpFails("distributed-lock.zookeeper.connection-timeout=-1s",
                "distributed-lock.zookeeper.connection-timeout must be positive, but is '-1s'");
        assertStartUpFails("distributed-lock.zookeeper.request-timeout=0",
                "distributed-lock.zookeeper.request-timeout must be positive, but is '0ms'");
        assertStartUpFails("distributed-lock.zookeeper.connect-string=zk1:99999",
                "distributed-lock.zookeeper.connect-string must be a comma-separated list of host:port pairs with "
                        + "ports from 1 to 65535, but is 'zk1:99999'");
        assertStartUpFails("distributed-lock.zookeeper.connect-string=zk1:2181,,zk2:2181",
                "distributed-lock.zookeeper.connect-string must be a comma-separated list", "'zk1:2181,,zk2:2181'");
        assertStartUpFails("distributed-lock.zookeeper.connect-string=zk1:2181/apps/",
                "distributed-lock.zookeeper.connect-string must not end with '/'", "'zk1:2181/apps/'");
        assertStartUpFails("distributed-lock.zookeeper.username=app:admin",
                "distributed-lock.zookeeper.username must not contain ':', but is 'app:admin'");
        this.contextRunner.withPropertyValues("distributed-lock.zookeeper.session-timeout=soon")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.zookeeper.session-timeout")
                .hasStackTraceContaining("soon"));
        // Not the store in use: its properties are still checked, as the other stores' are.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.zookeeper.namespace=locks")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.zookeeper.namespace must be an absolute path"));
    }

    @Test
    void acceptsAChrootAndBracketedAddresses() {
        assertThat(DistributedLockProperties.Zookeeper.connectStringProblem("zk1:2181,zk2,zk3:2181/apps/orders")).isNull();
        assertThat(DistributedLockProperties.Zookeeper.connectStringProblem("[::1]:2181")).isNull();
        assertThat(DistributedLockProperties.Zookeeper.connectStringProblem("zk 1:2181")).isNotNull();
        assertThat(DistributedLockProperties.Zookeeper.connectStringProblem(":2181")).isNotNull();
    }

    @Test
    void credentialsMustComeTogetherAndThePasswordIsNeverShown(CapturedOutput output) {
        onZookeeper().withPropertyValues("distributed-lock.zookeeper.password=" + SECRET)
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.zookeeper.username and distributed-lock.zookeeper.password "
                        + "must be set together, but only distributed-lock.zookeeper.password is set")
                .satisfies((failure) -> assertThat(stackTrace(failure)).doesNotContain(SECRET)));
        assertThat(output).doesNotContain(SECRET);
    }

    @Test
    void digestCredentialsAuthenticateAndKeepTheLocksFromOthers(CapturedOutput output) throws Exception {
        onZookeeper()
            .withPropertyValues("distributed-lock.zookeeper.namespace=/secured", "distributed-lock.zookeeper.username=app",
                    "distributed-lock.zookeeper.password=" + SECRET)
            .run((context) -> {
                assertThat(context.getBean(DistributedLockProperties.class).toString()).contains("username = 'app'")
                    .contains("password = '******'")
                    .doesNotContain(SECRET);
                FencedLock lock = context.getBean(LockRegistry.class).obtain("secret-key");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                    // Without the credentials the lock nodes can be neither read nor deleted.
                    assertThatExceptionOfType(KeeperException.NoAuthException.class)
                        .isThrownBy(() -> observer.getChildren().forPath("/secured"));
                    assertThatExceptionOfType(KeeperException.NoAuthException.class)
                        .isThrownBy(() -> observer.delete().deletingChildrenIfNeeded().forPath("/secured"));
                    // With them, another instance sees the holder.
                    CuratorFramework other = started(zookeeper.connectString(), "app:" + SECRET);
                    try {
                        List<String> locks = other.getChildren().forPath("/secured");
                        assertThat(locks).hasSize(1);
                        assertThat(other.getChildren().forPath("/secured/" + locks.get(0))).hasSize(1);
                    }
                    finally {
                        other.close();
                    }
                }
                finally {
                    lock.unlock();
                }
            });
        // A wrong password is another digest identity, which ZooKeeper refuses the namespace: locks fail.
        onZookeeper()
            .withPropertyValues("distributed-lock.zookeeper.namespace=/secured", "distributed-lock.zookeeper.username=app",
                    "distributed-lock.zookeeper.password=wrong-value")
            .run((context) -> {
                FencedLock lock = context.getBean(LockRegistry.class).obtain("secret-key");
                assertThatExceptionOfType(Exception.class).isThrownBy(() -> {
                    if (lock.tryLock(3, TimeUnit.SECONDS)) {
                        lock.unlock();
                        throw new AssertionError("acquired with a wrong password");
                    }
                    throw new IllegalStateException("timed out");
                });
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(output).contains("NOAUTH"));
            });
        assertThat(output).doesNotContain(SECRET).doesNotContain("wrong-value");
    }

    @Test
    void anUnreachableEnsembleLogsAWarningAndDoesNotStopStartUp(CapturedOutput output) {
        int closedPort = 1; // nothing listens on a privileged port
        this.contextRunner
            .withPropertyValues("distributed-lock.zookeeper.connect-string=127.0.0.1:" + closedPort,
                    "distributed-lock.zookeeper.request-timeout=500ms", "distributed-lock.zookeeper.connection-timeout=500ms")
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(ZookeeperLockRegistry.class);
                await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(output).contains("ZooKeeper at 127.0.0.1:" + closedPort
                            + " is not reachable yet; locks will connect on first use"));
                FencedLock lock = context.getBean(LockRegistry.class).obtain("unreachable");
                assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
                    .withMessageContaining("ZooKeeper at 127.0.0.1:" + closedPort);
            });
    }

    @Test
    void anApplicationRegistryReplacesTheZookeeperOne() {
        onZookeeper().withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockRegistry.class)
                .doesNotHaveBean(ZookeeperLockRegistry.class)
                .doesNotHaveBean(CuratorFramework.class));
        // Also without Curator: nothing asks for a client then.
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.apache.curator", "org.apache.zookeeper"))
            .withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class));
    }

    @Test
    void withoutCuratorStartUpFailsSayingWhatToAdd() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.apache.curator"))
            .run(ZookeeperStoreIntegrationTests::assertNoCurator);
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.apache.zookeeper"))
            .run(ZookeeperStoreIntegrationTests::assertNoCurator);
    }

    /** Fails start-up with {@link NoZookeeperClientException}, which the failure analyzer explains. */
    private static void assertNoCurator(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        assertThat(context.getStartupFailure()).rootCause().isInstanceOf(NoZookeeperClientException.class);
        var analysis = new NoZookeeperClientFailureAnalyzer().analyze(context.getStartupFailure());
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).startsWith("distributed-lock.store=zookeeper keeps locks in ZooKeeper")
            .contains("org.apache.curator:curator-framework", "is not on the class path");
        assertThat(analysis.getAction()).contains("Add org.apache.curator:curator-framework")
            .contains("distributed-lock.zookeeper");
    }

    private void assertStartUpFails(String property, String... messages) {
        this.contextRunner.withPropertyValues(property).run((context) -> {
            assertThat(context).hasFailed();
            for (String message : messages) {
                assertThat(context).getFailure().hasStackTraceContaining(message);
            }
        });
    }

    /** The stats of every entry of every lock under {@code namespace}, read by another client. */
    private static List<Stat> entries(String namespace) throws Exception {
        if (observer.checkExists().forPath(namespace) == null) {
            return List.of();
        }
        List<Stat> entries = new ArrayList<>();
        for (String lockNode : observer.getChildren().forPath(namespace)) {
            if (!lockNode.startsWith("#")) {
                continue;
            }
            for (String entry : observer.getChildren().forPath(namespace + "/" + lockNode)) {
                Stat stat = observer.checkExists().forPath(namespace + "/" + lockNode + "/" + entry);
                if (stat != null) {
                    entries.add(stat);
                }
            }
        }
        return entries;
    }

    static CuratorFramework started(String connectString, String digest) throws InterruptedException {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(6_000)
            .connectionTimeoutMs(5_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3));
        if (digest != null) {
            builder.authorization("digest", digest.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework client = builder.build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Could not connect to " + connectString);
        }
        return client;
    }

    private static String stackTrace(Throwable failure) {
        StringWriter writer = new StringWriter();
        failure.printStackTrace(new PrintWriter(writer));
        return writer.toString();
    }

    /**
     * An application's own Curator client, not started (the auto-configuration starts it), closed
     * as a bean; the proxy records how many lock entries are left in ZooKeeper when it is closed.
     */
    @Configuration(proxyBeanMethods = false)
    static class OwnCurator {

        private final CuratorFramework delegate = CuratorFrameworkFactory.newClient(zookeeper.connectString(), 6_000,
                5_000, new ExponentialBackoffRetry(100, 3));

        final CuratorFramework curator = (CuratorFramework) Proxy.newProxyInstance(
                CuratorFramework.class.getClassLoader(), new Class<?>[] { CuratorFramework.class },
                (proxy, method, arguments) -> {
                    if (method.getName().equals("close") && method.getParameterCount() == 0) {
                        this.entriesWhenClosed = entries("/distributed-lock").size();
                    }
                    return Delegation.invoke(this.delegate, method, arguments);
                });

        volatile int entriesWhenClosed = -1;

        @Bean
        CuratorFramework myCurator() {
            return this.curator;
        }
    }
}
