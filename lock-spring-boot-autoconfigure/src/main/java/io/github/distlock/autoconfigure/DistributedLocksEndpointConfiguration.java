package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.actuate.DistributedLocksEndpointWebExtension;
import io.github.distlock.etcd.EtcdLockRegistry;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code distributedlocks} actuator endpoint, when Actuator is on the class path, the registry
 * is on etcd and the endpoint is both accessible and exposed (it is off by default); its web
 * extension when it is exposed over HTTP.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint",
        value = Client.class)
class DistributedLocksEndpointConfiguration {

    // Nested so that the condition annotation is only read once Actuator is known to be present.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(EtcdLockRegistry.class)
    @ConditionalOnAvailableEndpoint(DistributedLocksEndpoint.class)
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        DistributedLocksEndpoint distributedLocksEndpoint(EtcdLockRegistry registry) {
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
