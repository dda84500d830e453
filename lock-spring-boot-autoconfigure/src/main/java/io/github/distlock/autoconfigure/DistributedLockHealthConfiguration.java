package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A health indicator for the etcd lock registry, when Spring Boot's health support is on the
 * class path. Switched off with {@code management.health.distributed-lock.enabled=false}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ HealthIndicator.class, Client.class })
@ConditionalOnBean(EtcdLockRegistry.class)
@ConditionalOnEnabledHealthIndicator("distributed-lock")
class DistributedLockHealthConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
    EtcdLockRegistryHealthIndicator distributedLockHealthIndicator(EtcdLockRegistry registry) {
        return new EtcdLockRegistryHealthIndicator(registry);
    }
}
