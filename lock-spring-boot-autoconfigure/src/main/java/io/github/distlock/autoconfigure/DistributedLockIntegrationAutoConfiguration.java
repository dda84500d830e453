package io.github.distlock.autoconfigure;

import io.github.distlock.LockRegistry;
import io.github.distlock.integration.DistributedLockIntegrationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the lock registry as a Spring Integration
 * {@code org.springframework.integration.support.locks.LockRegistry}, when
 * {@code spring-integration-core} is on the class path: a {@link DistributedLockIntegrationRegistry}
 * (fair locks) over the application's {@link LockRegistry}, so that
 * {@code LockRegistryLeaderInitiator}, aggregators and {@code LockRequestHandlerAdvice} lock on the
 * configured store. Backs off when the application defines a Spring Integration
 * {@code LockRegistry} of its own. The only auto-configuration that loads a Spring Integration type.
 *
 * <p>Runs after {@link DistributedLockAutoConfiguration}, which defines the lock registry.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(org.springframework.integration.support.locks.LockRegistry.class)
@ConditionalOnDistributedLockEnabled
@ConditionalOnSingleCandidate(LockRegistry.class)
public final class DistributedLockIntegrationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(org.springframework.integration.support.locks.LockRegistry.class)
    DistributedLockIntegrationRegistry distributedLockIntegrationRegistry(LockRegistry registry) {
        return new DistributedLockIntegrationRegistry(registry);
    }
}
