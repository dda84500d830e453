package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import io.github.distlock.health.JdbcLockRegistryHealthIndicator;
import io.github.distlock.health.LockRegistryHealthIndicator;
import io.github.distlock.health.RedisLockRegistryHealthIndicator;
import io.github.distlock.health.ZookeeperLockRegistryHealthIndicator;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@code distributedLock} health indicator for a lock registry that
 * depends on a store (etcd, Redis, ZooKeeper or JDBC), when Spring Boot's health support is on the class path: a
 * {@link LockRegistryHealthIndicator} with the store's own details. The in-memory registry has no
 * store that could fail and gets none. Switched off with
 * {@code management.health.distributed-lock.enabled=false}.
 *
 * <p>Runs after {@link DistributedLockAutoConfiguration}, which defines the registry. Spring Boot
 * collects health contributors when it creates its registry of them, not through a condition, so
 * no order relative to its health auto-configurations is needed (its own contributors have none).
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnDistributedLockEnabled
public final class DistributedLockHealthAutoConfiguration {

    // Nested so that each store's types and the health indicator condition are only read once
    // the store's client and health support are known to be present.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Client.class)
    @ConditionalOnSingleCandidate(EtcdLockRegistry.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class EtcdRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        EtcdLockRegistryHealthIndicator distributedLockHealthIndicator(EtcdLockRegistry registry) {
            return new EtcdLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = RedisStoreConfiguration.LETTUCE_CLIENT)
    @ConditionalOnSingleCandidate(RedisLockRegistry.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class RedisRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        RedisLockRegistryHealthIndicator distributedLockHealthIndicator(RedisLockRegistry registry) {
            return new RedisLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = ZookeeperStoreConfiguration.CURATOR_FRAMEWORK)
    @ConditionalOnSingleCandidate(ZookeeperLockRegistry.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class ZookeeperRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        ZookeeperLockRegistryHealthIndicator distributedLockHealthIndicator(ZookeeperLockRegistry registry) {
            return new ZookeeperLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(JdbcLockRegistry.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class JdbcRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        JdbcLockRegistryHealthIndicator distributedLockHealthIndicator(JdbcLockRegistry registry) {
            return new JdbcLockRegistryHealthIndicator(registry);
        }
    }
}
