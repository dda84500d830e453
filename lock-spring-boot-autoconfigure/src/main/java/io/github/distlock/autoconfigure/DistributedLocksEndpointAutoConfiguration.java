package io.github.distlock.autoconfigure;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.actuate.DistributedLocksEndpointWebExtension;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@code distributedlocks} actuator endpoint, when Actuator is on the
 * class path, the registry can be inspected (any store; with several registries, the single or
 * primary one) and the endpoint is both accessible and exposed (it is off by default); its web
 * extension when it is exposed over HTTP.
 *
 * <p>Runs after {@link DistributedLockAutoConfiguration}, which defines the registry.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint")
@ConditionalOnDistributedLockEnabled
public final class DistributedLocksEndpointAutoConfiguration {

    // Nested so that the endpoint condition is only read once Actuator is known to be present.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(InspectableLockRegistry.class)
    @ConditionalOnAvailableEndpoint(DistributedLocksEndpoint.class)
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        DistributedLocksEndpoint distributedLocksEndpoint(InspectableLockRegistry registry) {
            return new DistributedLocksEndpoint(registry);
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(DistributedLocksEndpoint.class)
        @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
        DistributedLocksEndpointWebExtension distributedLocksEndpointWebExtension(DistributedLocksEndpoint endpoint) {
            return new DistributedLocksEndpointWebExtension(endpoint);
        }
    }
}
