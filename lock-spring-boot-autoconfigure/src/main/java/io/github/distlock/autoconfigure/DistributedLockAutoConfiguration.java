package io.github.distlock.autoconfigure;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockLossListener;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of distributed locks: a {@link io.github.distlock.LockRegistry} on the store
 * that {@code distributed-lock.store} names, and the advice that makes
 * {@link io.github.distlock.annotation.DistributedLock @DistributedLock} methods run under their
 * lock.
 * <ul>
 * <li>{@code etcd} (the default): an {@link io.github.distlock.etcd.EtcdLockRegistry} and the
 * jetcd client it uses, configured under {@code distributed-lock.etcd}.</li>
 * <li>{@code redis}: a {@link io.github.distlock.redis.RedisLockRegistry} on the application's own
 * Redis connection, the Lettuce client of the {@code LettuceConnectionFactory} that Spring Boot
 * configures under {@code spring.data.redis} (host and port or URL, credentials, SSL, Sentinel or
 * Cluster); {@code distributed-lock.redis} sets the namespace, the lease TTL and the request
 * timeout. Without a Lettuce connection factory (spring-boot-starter-data-redis missing, or Jedis)
 * start-up fails with a message that says what to add. Ordered after Spring Boot's Redis
 * auto-configuration, which defines that factory.</li>
 * <li>{@code zookeeper}: a {@link io.github.distlock.zookeeper.ZookeeperLockRegistry} on the
 * application's {@code CuratorFramework} bean, used as it is, or else on a Curator client built
 * from {@code distributed-lock.zookeeper} (connect string, session and connection timeouts,
 * digest credentials), which also sets the namespace and the request timeout. Without Curator on
 * the class path start-up fails with a message that says what to add.</li>
 * <li>{@code jdbc}: a {@link io.github.distlock.jdbc.JdbcLockRegistry} on the application's
 * {@code DataSource}, as Spring Boot configures it under {@code spring.datasource} or as the
 * application defines it; {@code distributed-lock.jdbc} sets the table prefix, the lease TTL, the
 * poll interval, the request timeout and when the lock tables are created. Without Spring Boot's
 * JDBC support or without a single DataSource start-up fails with a message that says what to add.
 * Ordered after Spring Boot's DataSource auto-configuration.</li>
 * <li>{@code in-memory}: an {@link io.github.distlock.InMemoryLockRegistry}, local to this JVM.</li>
 * </ul>
 *
 * <p>Auto-configurations of their own, ordered after this one, add the rest where their
 * dependencies are on the class path: {@link DistributedLockMetricsAutoConfiguration} measures
 * locked calls and the registry with Micrometer and a {@code MeterRegistry};
 * {@link DistributedLockHealthAutoConfiguration} contributes a health indicator for an etcd,
 * Redis, ZooKeeper or JDBC registry with Spring Boot's health support;
 * {@link DistributedLocksEndpointAutoConfiguration} adds the {@code distributedlocks} endpoint (off
 * by default), which shows holders and waiters, with Actuator.
 *
 * <p>Every {@link LockLossListener} bean is told of the losses of every
 * {@link InspectableLockRegistry} bean, the auto-configured one or the application's.
 *
 * <p>A {@code LockRegistry} bean of the application replaces the auto-configured one, and a
 * jetcd {@code Client} bean the etcd client, a {@code CuratorFramework} bean the ZooKeeper one.
 * {@code distributed-lock.enabled=false} switches all of them off.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration" })
@ConditionalOnDistributedLockEnabled
@EnableConfigurationProperties(DistributedLockProperties.class)
@Import({ EtcdStoreConfiguration.class, RedisStoreConfiguration.class, ZookeeperStoreConfiguration.class,
        JdbcStoreConfiguration.class, InMemoryStoreConfiguration.class, DistributedLockAspectConfiguration.class })
public final class DistributedLockAutoConfiguration {

    /**
     * Reports each {@code distributed-lock.*} property that names no property, with the closest
     * one that does: a misspelled name would otherwise leave its default in place silently.
     */
    @Bean
    SmartInitializingSingleton distributedLockUnknownPropertyReport(Environment environment) {
        return () -> UnknownPropertyCheck.find(environment)
            .forEach((unknown) -> LoggerFactory.getLogger(DistributedLockAutoConfiguration.class).warn(unknown.message()));
    }

    /**
     * Registers the listeners once every singleton exists, so that a listener may depend on the
     * registry it listens to.
     */
    @Bean
    SmartInitializingSingleton distributedLockLossListenerRegistration(
            ObjectProvider<InspectableLockRegistry> registries, ObjectProvider<LockLossListener> listeners) {
        return () -> registries.orderedStream().forEach((registry) -> listeners.orderedStream().forEach((listener) -> {
            try {
                registry.addLossListener(listener);
            }
            catch (UnsupportedOperationException ex) {
                LoggerFactory.getLogger(DistributedLockAutoConfiguration.class)
                    .warn("Lock loss listener {} not registered: {}", listener, ex.getMessage());
            }
        }));
    }
}
