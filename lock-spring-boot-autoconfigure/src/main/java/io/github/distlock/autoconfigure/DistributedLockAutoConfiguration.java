package io.github.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/**
 * Auto-configuration of distributed locks: a {@link io.github.distlock.LockRegistry} on etcd (or
 * in memory, with {@code distributed-lock.store=in-memory}), the jetcd client it uses, and the
 * advice that makes {@link io.github.distlock.annotation.DistributedLock @DistributedLock} methods
 * run under their lock.
 *
 * <p>Auto-configurations of their own, ordered after this one, add the rest where their
 * dependencies are on the class path: {@link DistributedLockMetricsAutoConfiguration} measures
 * locked calls and the etcd registry with Micrometer and a {@code MeterRegistry};
 * {@link DistributedLockHealthAutoConfiguration} contributes a health indicator for an etcd
 * registry with Spring Boot's health support; {@link DistributedLocksEndpointAutoConfiguration}
 * adds the {@code distributedlocks} endpoint (off by default), which shows holders and waiters,
 * with Actuator.
 *
 * <p>A {@code LockRegistry} or jetcd {@code Client} bean of the application replaces the
 * auto-configured one. {@code distributed-lock.enabled=false} switches all of them off.
 */
@AutoConfiguration
@ConditionalOnDistributedLockEnabled
@EnableConfigurationProperties(DistributedLockProperties.class)
@Import({ EtcdStoreConfiguration.class, InMemoryStoreConfiguration.class, DistributedLockAspectConfiguration.class })
public final class DistributedLockAutoConfiguration {

}
