package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.metrics.EtcdLockRegistryMetrics;
import io.github.distlock.metrics.MicrometerLockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Micrometer meters of {@code @DistributedLock} calls and of the etcd lock registry, when
 * Micrometer is on the class path and the application has a {@link MeterRegistry}. Kept apart so that no other configuration loads a
 * Micrometer type.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
class DistributedLockMetricsConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockMetrics distributedLockMetrics(MeterRegistry meterRegistry, DistributedLockProperties properties) {
        return new MicrometerLockMetrics(meterRegistry, properties.getMetrics().getMaxKeyTags());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Client.class)
    @ConditionalOnBean(EtcdLockRegistry.class)
    static class EtcdRegistryMetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        EtcdLockRegistryMetrics etcdLockRegistryMetrics(EtcdLockRegistry registry) {
            return new EtcdLockRegistryMetrics(registry);
        }
    }
}
