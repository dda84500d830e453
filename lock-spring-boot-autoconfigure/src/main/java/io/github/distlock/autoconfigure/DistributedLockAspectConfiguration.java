package io.github.distlock.autoconfigure;

import io.github.distlock.LockRegistry;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.aop.LockOperationSource;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * The {@code @DistributedLock} advisor and an auto-proxy creator to apply it (the one Spring
 * Boot's AOP auto-configuration or {@code @EnableTransactionManagement} registers, if present).
 *
 * <p>The beans are infrastructure and created early, while the auto-proxy creator collects
 * advisors: they read the properties straight from the environment rather than depend on the
 * properties bean, and resolve the lock registry and the metrics on the first locked call.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@Import(DistributedLockAspectConfiguration.AutoProxyCreatorRegistrar.class)
class DistributedLockAspectConfiguration {

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static LockOperationSource distributedLockOperationSource(Environment environment) {
        return new LockOperationSource(environment, properties(environment).getWaitTimeout());
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static DistributedLockInterceptor distributedLockInterceptor(LockOperationSource distributedLockOperationSource,
            ObjectProvider<LockRegistry> lockRegistry, BeanFactory beanFactory, ApplicationEventPublisher events,
            ObjectProvider<LockMetrics> lockMetrics) {
        return new DistributedLockInterceptor(distributedLockOperationSource, lockRegistry, beanFactory, events,
                lockMetrics);
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static DistributedLockAdvisor distributedLockAdvisor(LockOperationSource distributedLockOperationSource,
            DistributedLockInterceptor distributedLockInterceptor, Environment environment) {
        DistributedLockAdvisor advisor = new DistributedLockAdvisor(distributedLockOperationSource,
                distributedLockInterceptor);
        advisor.setOrder(properties(environment).getAspectOrder());
        return advisor;
    }

    private static DistributedLockProperties properties(Environment environment) {
        return Binder.get(environment).bindOrCreate("distributed-lock", DistributedLockProperties.class);
    }

    /** Registers Spring's infrastructure auto-proxy creator unless a more capable one exists. */
    static class AutoProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
