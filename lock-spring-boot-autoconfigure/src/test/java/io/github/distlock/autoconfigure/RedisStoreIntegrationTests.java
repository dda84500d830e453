package io.github.distlock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.LockSnapshot;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.Locked;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.LockedService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.OwnRegistry;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.testsupport.RedisServer;
import io.github.distlock.testsupport.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisSentinelConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code distributed-lock.store=redis} against a real redis-server: the registry on the
 * application's Redis connection as Spring Boot configures it, its properties, shutdown, the
 * meters and the endpoint, and a clear start-up failure without a Lettuce connection.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisStoreIntegrationTests {

    @RegisterExtension
    static final RedisServerExtension redisServer = new RedisServerExtension();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=redis", "distributed-lock.redis.request-timeout=2s");


    private ApplicationContextRunner onRedis() {
        return this.contextRunner.withPropertyValues("spring.data.redis.host=" + redisServer.server().host(),
                "spring.data.redis.port=" + redisServer.server().port());
    }

    @Test
    void locksOnTheApplicationsRedisConnection() {
        onRedis().withUserConfiguration(LockedService.class).run((context) -> {
            assertThat(context).hasSingleBean(LockRegistry.class)
                .hasSingleBean(RedisLockRegistry.class)
                .hasSingleBean(DistributedLockAdvisor.class);
            RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
            assertThat(registry.getNamespace()).isEqualTo("distributed-lock:");
            assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(10));
            assertThat(registry.getOwnerIdentity()).endsWith(":" + ProcessHandle.current().pid());
            // The registry runs on the client of Spring Boot's connection factory, not one of its own.
            assertThat(context.getBean(LettuceConnectionFactory.class).getNativeClient()).isInstanceOf(RedisClient.class);

            FencedLock lock = registry.obtain("orders/7");
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            try {
                LockSnapshot snapshot = registry.describeLock("orders/7", 10);
                assertThat(snapshot.holder()).isNotNull();
                assertThat(snapshot.holder().owner()).isEqualTo(registry.getOwnerIdentity());
                assertThat(snapshot.holder().thread()).isEqualTo(Thread.currentThread().getName());
                assertThat(snapshot.holder().fence()).isEqualTo(lock.getFence());
                // In this very Redis, under the namespace.
                assertThat(redisServer.server().command("ZCARD", "distributed-lock:{orders/7}:q")).isEqualTo("1");
            }
            finally {
                lock.unlock();
            }
            assertThat(registry.describeLock("orders/7", 10).holder()).isNull();
            assertThat(redisServer.server().command("ZCARD", "distributed-lock:{orders/7}:q")).isEqualTo("0");
            assertThat(context.getBean(Locked.class).key()).isEqualTo("locked");
        });
    }

    @Test
    void startUpSaysAtInfoWhichStoreTheLocksUseAndWhere(CapturedOutput output) {
        onRedis().withPropertyValues("distributed-lock.redis.namespace=orders:", "distributed-lock.redis.lease-ttl=20s")
            .run((context) -> assertThat(output.getAll().lines().filter((line) -> line.contains("Distributed locks use")))
                .singleElement()
                .satisfies((line) -> assertThat(line).contains("INFO")
                    .endsWith("Distributed locks use Redis at " + redisServer.server().host() + ":"
                            + redisServer.server().port() + ", namespace 'orders:', lease TTL 20s")));
    }

    @Test
    void bindsTheRedisProperties() {
        onRedis()
            .withPropertyValues("distributed-lock.redis.namespace=billing:", "distributed-lock.redis.lease-ttl=3",
                    "distributed-lock.redis.request-timeout=750ms", "distributed-lock.owner-identity=billing-7")
            .run((context) -> {
                DistributedLockProperties.Redis properties = context.getBean(DistributedLockProperties.class).getRedis();
                assertThat(properties.getLeaseTtl()).isEqualTo(Duration.ofSeconds(3));
                assertThat(properties.getRequestTimeout()).isEqualTo(Duration.ofMillis(750));
                assertThat(properties.toString()).contains("namespace = 'billing:'", "leaseTtl = '3000ms'",
                        "requestTimeout = '750ms'");
                RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
                assertThat(registry.getNamespace()).isEqualTo("billing:");
                assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(3));
                FencedLock lock = registry.obtain("invoice");
                lock.lock();
                try {
                    assertThat(registry.describeLock("invoice", 10).holder().owner()).isEqualTo("billing-7");
                    assertThat(redisServer.server().command("ZCARD", "billing:{invoice}:q")).isEqualTo("1");
                }
                finally {
                    lock.unlock();
                }
            });
        onRedis().withPropertyValues("distributed-lock.redis.lease-ttl=1500ms")
            .run((context) -> assertThat(context.getBean(RedisLockRegistry.class).getLeaseTtl())
                .isEqualTo(Duration.ofMillis(1500)));
    }

    @Test
    void defaultsAreTheRegistrysDefaults() {
        DistributedLockProperties.Redis defaults = new DistributedLockProperties().getRedis();
        assertThat(defaults.getNamespace()).isEqualTo(RedisLockRegistry.DEFAULT_NAMESPACE);
        assertThat(defaults.getLeaseTtl()).isEqualTo(RedisLockRegistry.DEFAULT_LEASE_TTL);
        assertThat(defaults.getRequestTimeout()).isEqualTo(RedisLockRegistry.DEFAULT_REQUEST_TIMEOUT);
    }

    @Test
    void closingTheApplicationReleasesItsLocksAtOnce() {
        onRedis().run((context) -> {
            FencedLock lock = context.getBean(LockRegistry.class).obtain("shutdown");
            lock.lock();
            assertThat(redisServer.server().command("ZCARD", "distributed-lock:{shutdown}:q")).isEqualTo("1");
            context.close();
            // Not after the lease TTL (10 s): the registry removed its entry before Spring Boot's
            // connection factory shut its client down.
            assertThat(redisServer.server().command("ZCARD", "distributed-lock:{shutdown}:q")).isEqualTo("0");
            assertThat(lock.isLockedByCurrentThread()).isFalse();
        });
    }

    @Test
    void anApplicationRegistryReplacesTheRedisOne() {
        onRedis().withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockRegistry.class)
                .doesNotHaveBean(RedisLockRegistry.class)
                .doesNotHaveBean(RedisLockRegistryLifecycle.class));
        // Also without Spring Data Redis: nothing asks for a connection then.
        this.contextRunner.withClassLoader(new FilteredClassLoader("io.lettuce", "org.springframework.data.redis"))
            .withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class));
    }

    @Test
    void describesTheServerByHostAndPortNeverByPassword() throws Exception {
        int closedPort = 1; // nothing listens on a privileged port
        this.contextRunner
            .withPropertyValues("spring.data.redis.url=redis://app:s3cret-value@127.0.0.1:" + closedPort + "/2")
            .run((context) -> assertThat(connectFailure(context)).contains("Redis at 127.0.0.1:" + closedPort + ", database 2")
                .doesNotContain("s3cret-value"));
        this.contextRunner
            .withPropertyValues("spring.data.redis.sentinel.master=mymaster",
                    "spring.data.redis.sentinel.nodes=127.0.0.1:" + closedPort,
                    "spring.data.redis.sentinel.password=s3cret-value")
            .run((context) -> {
                assertThat(context.getBean(LettuceConnectionFactory.class).getNativeClient()).isInstanceOf(RedisClient.class);
                assertThat(connectFailure(context)).contains("Redis master 'mymaster' via Sentinel at 127.0.0.1:" + closedPort)
                    .doesNotContain("s3cret-value");
            });
        this.contextRunner.withPropertyValues("spring.data.redis.cluster.nodes=127.0.0.1:" + closedPort)
            .run((context) -> {
                assertThat(context.getBean(LettuceConnectionFactory.class).getNativeClient())
                    .isInstanceOf(RedisClusterClient.class);
                assertThat(connectFailure(context)).contains("Redis Cluster at 127.0.0.1:" + closedPort);
            });
    }

    @Test
    void usesTheConnectionsPassword() {
        try (RedisServer secured = RedisServer.start(false)) {
            secured.command("CONFIG", "SET", "requirepass", "s3cret-value");
            this.contextRunner
                .withPropertyValues("spring.data.redis.host=" + secured.host(), "spring.data.redis.port=" + secured.port(),
                        "spring.data.redis.password=s3cret-value")
                .run((context) -> {
                    FencedLock lock = context.getBean(LockRegistry.class).obtain("secured");
                    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
                    lock.unlock();
                });
            this.contextRunner
                .withPropertyValues("spring.data.redis.host=" + secured.host(), "spring.data.redis.port=" + secured.port(),
                        "spring.data.redis.password=wrong-value")
                .run((context) -> assertThat(connectFailure(context)).contains("Redis at 127.0.0.1:" + secured.port())
                    .doesNotContain("wrong-value"));
        }
    }

    @Test
    void metersAndTheEndpointShowAHeldRedisLock() {
        HeldLockObservations.withMetersAndEndpoint(onRedis())
            .run((context) -> HeldLockObservations.assertShowAHeldLock(context, RedisLockRegistry.class, "distributed-lock:"));
    }

    @Test
    void withoutSpringDataRedisStartUpFailsSayingWhatToAdd() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("io.lettuce", "org.springframework.data.redis"))
            .withPropertyValues("distributed-lock.redis.lease-ttl=2s")
            .run((context) -> assertNoConnection(context, "Spring Data Redis with Lettuce is not on the class path",
                    "Add org.springframework.boot:spring-boot-starter-data-redis"));
        this.contextRunner.withClassLoader(new FilteredClassLoader("io.lettuce"))
            .run((context) -> assertNoConnection(context, "Spring Data Redis with Lettuce is not on the class path",
                    "spring-boot-starter-data-redis"));
    }

    @Test
    void withoutALettuceConnectionFactoryStartUpFailsSayingWhatToDo() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=redis")
            .run((context) -> assertNoConnection(context, "there is no RedisConnectionFactory bean",
                    "do not exclude Spring Boot's DataRedisAutoConfiguration"));
        this.contextRunner.withUserConfiguration(JedisLikeConnectionFactory.class)
            .run((context) -> assertNoConnection(context,
                    "the application's RedisConnectionFactory is a " + NotLettuceConnectionFactory.class.getName(),
                    "Use Lettuce"));
        this.contextRunner.withUserConfiguration(TwoConnectionFactories.class)
            .run((context) -> assertNoConnection(context, "there are 2 RedisConnectionFactory beans", "@Primary"));
        this.contextRunner.withPropertyValues("spring.data.redis.masterreplica.nodes=127.0.0.1:6379,127.0.0.1:6380")
            .run((context) -> assertNoConnection(context, "static master/replica connection",
                    "through Sentinel (spring.data.redis.sentinel.*)"));
    }

    /** Fails start-up with {@link NoRedisConnectionException}, which the failure analyzer explains. */
    private static void assertNoConnection(AssertableApplicationContext context, String problem, String action) {
        assertThat(context).hasFailed();
        assertThat(context.getStartupFailure()).rootCause().isInstanceOf(NoRedisConnectionException.class);
        var analysis = new NoRedisConnectionFailureAnalyzer().analyze(context.getStartupFailure());
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).startsWith("distributed-lock.store=redis keeps locks on the application's "
                + "Redis connection").contains(problem);
        assertThat(analysis.getAction()).contains(action);
    }

    /** Why {@link InspectableLockRegistry#connect()} failed: its message names where Redis is. */
    private static String connectFailure(AssertableApplicationContext context) throws InterruptedException {
        ExecutionException failure = assertThatExceptionOfType(ExecutionException.class)
            .isThrownBy(() -> context.getBean(InspectableLockRegistry.class).connect().get(30, TimeUnit.SECONDS))
            .actual();
        assertThatIllegalStateException().isThrownBy(() -> {
            throw (IllegalStateException) failure.getCause();
        });
        return failure.getCause().getMessage();
    }

    @Configuration(proxyBeanMethods = false)
    static class JedisLikeConnectionFactory {

        @Bean
        NotLettuceConnectionFactory redisConnectionFactory() {
            return new NotLettuceConnectionFactory();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoConnectionFactories {

        @Bean
        LettuceConnectionFactory firstConnectionFactory() {
            return new LettuceConnectionFactory("127.0.0.1", 6379);
        }

        @Bean
        LettuceConnectionFactory secondConnectionFactory() {
            return new LettuceConnectionFactory("127.0.0.1", 6380);
        }
    }

    /** A connection factory of another client, as Jedis's would be. */
    static class NotLettuceConnectionFactory implements RedisConnectionFactory {

        @Override
        public boolean getConvertPipelineAndTxResults() {
            return false;
        }

        @Override
        public RedisConnection getConnection() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RedisClusterConnection getClusterConnection() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RedisSentinelConnection getSentinelConnection() {
            throw new UnsupportedOperationException();
        }

        @Override
        public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
            return null;
        }
    }
}
