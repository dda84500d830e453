package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of a health indicator for the etcd lock registry, when Spring Boot's health
 * support is on the class path. Switched off with
 * {@code management.health.distributed-lock.enabled=false}.
 *
 * <p>Runs after {@link DistributedLockAutoConfiguration}, which defines the registry. Spring Boot
 * collects health contributors when it creates its registry of them, not through a condition, so
 * no order relative to its health auto-configurations is needed (its own contributors have none).
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, Client.class })
@ConditionalOnDistributedLockEnabled
public final class DistributedLockHealthAutoConfiguration {

    // Nested so that the health indicator condition is only read once health support is known to be present.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(EtcdLockRegistry.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class EtcdRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        EtcdLockRegistryHealthIndicator distributedLockHealthIndicator(EtcdLockRegistry registry) {
            return new EtcdLockRegistryHealthIndicator(registry);
        }
    }
}
