package io.github.distlock.autoconfigure;

import java.util.List;

import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Redis;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.redis.RedisLockRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis lock registry, for {@code distributed-lock.store=redis}, on the application's own Redis
 * connection: the Lettuce client of its {@link LettuceConnectionFactory}, as Spring Boot
 * configures it under {@code spring.data.redis} (host and port or URL, credentials, database,
 * SSL, Sentinel or Cluster) or as the application defines it. The registry is closed when the
 * application context stops, just before the connection factory shuts that client down (see
 * {@link RedisLockRegistryLifecycle}), so held locks are released at once.
 *
 * <p>Without a connection the registry can use (Spring Data Redis or Lettuce not on the class
 * path, no connection factory, a Jedis one, a static master/replica one), start-up fails with a
 * {@link NoRedisConnectionException} that says what to add. A {@code LockRegistry} bean of the
 * application replaces all of this.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnStore(Store.REDIS)
class RedisStoreConfiguration {

    static final String LETTUCE_CONNECTION_FACTORY = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory";

    static final String LETTUCE_CLIENT = "io.lettuce.core.RedisClient";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { LETTUCE_CONNECTION_FACTORY, LETTUCE_CLIENT })
    @ConditionalOnMissingBean(LockRegistry.class)
    static class LettuceRegistryConfiguration {

        private static final Log logger = LogFactory.getLog(RedisStoreConfiguration.class);

        @Bean(destroyMethod = "close")
        RedisLockRegistry distributedLockRegistry(ObjectProvider<RedisConnectionFactory> connectionFactories,
                DistributedLockProperties properties, Environment environment) {
            LettuceConnectionFactory connectionFactory = lettuceConnectionFactory(connectionFactories, environment);
            if (!connectionFactory.isRunning()) {
                // Created without early start-up: its client exists only once it is started.
                connectionFactory.start();
            }
            Redis redis = properties.getRedis();
            String description = RedisConnectionDescription.of(connectionFactory);
            RedisLockRegistry registry = RedisLockRegistry.builder(connectionFactory.getRequiredNativeClient())
                .namespace(redis.getNamespace())
                .leaseTtl(redis.getLeaseTtl())
                .requestTimeout(redis.getRequestTimeout())
                .ownerIdentity(OwnerIdentity.resolve(properties, environment))
                .localHandoff(properties.getLocalHandoff().toLocalHandoff())
                .description(description)
                .build();
            BackgroundConnect.announce(description, "namespace '" + redis.getNamespace() + "'",
                    "lease TTL " + PropertyChecks.print(redis.getLeaseTtl()), logger);
            BackgroundConnect.connect(registry, description, logger);
            return registry;
        }

        @Bean
        RedisLockRegistryLifecycle distributedLockRegistryLifecycle(RedisLockRegistry distributedLockRegistry,
                ObjectProvider<RedisConnectionFactory> connectionFactories, Environment environment) {
            return new RedisLockRegistryLifecycle(distributedLockRegistry,
                    lettuceConnectionFactory(connectionFactories, environment));
        }

        /** The application's connection factory, if the registry can use it. */
        private static LettuceConnectionFactory lettuceConnectionFactory(
                ObjectProvider<RedisConnectionFactory> connectionFactories, Environment environment) {
            RedisConnectionFactory connectionFactory = connectionFactories.getIfUnique();
            if (connectionFactory == null) {
                List<String> types = connectionFactories.stream()
                    .map((candidate) -> candidate.getClass().getName())
                    .toList();
                throw types.isEmpty() ? NoRedisConnectionException.noConnectionFactory()
                        : NoRedisConnectionException.ambiguous(types);
            }
            if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
                throw NoRedisConnectionException.notLettuce(connectionFactory.getClass().getName());
            }
            if (!lettuce.isClusterAware() && !lettuce.isRedisSentinelAware() && isMasterReplica(environment)) {
                throw NoRedisConnectionException.masterReplica();
            }
            return lettuce;
        }

        /**
         * Whether Spring Boot configures a static master/replica connection: its Lettuce client
         * has no server of its own (the factory exposes no other sign of it). Spring Boot picks
         * Sentinel and Cluster first, so this counts only when the factory is neither.
         */
        private static boolean isMasterReplica(Environment environment) {
            return Binder.get(environment)
                .bind("spring.data.redis.masterreplica.nodes", Bindable.listOf(String.class))
                .map((nodes) -> !nodes.isEmpty())
                .orElse(false);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(LettuceMissingCondition.class)
    @ConditionalOnMissingBean(LockRegistry.class)
    static class LettuceMissingConfiguration {

        @Bean
        LockRegistry distributedLockRegistry() {
            throw NoRedisConnectionException.notOnClassPath();
        }
    }

    /** Spring Data Redis or Lettuce is not on the class path. */
    static class LettuceMissingCondition extends NoneNestedConditions {

        LettuceMissingCondition() {
            super(ConfigurationPhase.PARSE_CONFIGURATION);
        }

        @ConditionalOnClass(name = { LETTUCE_CONNECTION_FACTORY, LETTUCE_CLIENT })
        static class LettucePresent {

        }
    }
}
