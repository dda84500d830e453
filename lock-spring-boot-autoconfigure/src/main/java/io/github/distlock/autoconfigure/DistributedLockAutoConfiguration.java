package io.github.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of distributed locks: a {@link io.github.distlock.LockRegistry} on etcd (or
 * in memory, with {@code distributed-lock.store=in-memory}), the jetcd client it uses, and the
 * advice that makes {@link io.github.distlock.annotation.DistributedLock @DistributedLock} methods
 * run under their lock. With Micrometer and a {@code MeterRegistry}, locked calls are measured;
 * with Spring Boot's health support, an etcd registry contributes a health indicator; with Actuator,
 * the {@code distributedlocks} endpoint (off by default) shows holders and waiters.
 *
 * <p>A {@code LockRegistry} or jetcd {@code Client} bean of the application replaces the
 * auto-configured one. {@code distributed-lock.enabled=false} switches everything off.
 */
// After the meter registries are defined, so that the metrics condition sees them.
@AutoConfiguration(
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DistributedLockProperties.class)
@Import({ EtcdStoreConfiguration.class, InMemoryStoreConfiguration.class, DistributedLockAspectConfiguration.class,
        DistributedLockMetricsConfiguration.class, DistributedLockHealthConfiguration.class,
        DistributedLocksEndpointConfiguration.class })
public final class DistributedLockAutoConfiguration {

}
