package io.github.distlock.autoconfigure;

import io.github.distlock.LockRegistry;
import io.github.distlock.aop.ClassProxyCheck;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockAspect;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.aop.LockOperationSource;
import io.github.distlock.aop.WeavingCheck;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;

/**
 * The {@code @DistributedLock} interceptor and how it is applied, after
 * {@code distributed-lock.aop.mode}: in proxy mode (the default) an advisor and an auto-proxy
 * creator to apply it (the one Spring Boot's AOP auto-configuration or
 * {@code @EnableTransactionManagement} registers, if present); in aspectj mode no proxies, but the
 * interceptor handed to the woven {@link DistributedLockAspect}.
 *
 * <p>The beans are infrastructure and created early, while the auto-proxy creator collects
 * advisors: they read the properties straight from the environment rather than depend on the
 * properties bean, and resolve the lock registry and the metrics on the first locked call.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
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

    @Configuration(proxyBeanMethods = false)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @Conditional(OnAopModeCondition.Proxy.class)
    @Import(AutoProxyCreatorRegistrar.class)
    static class ProxyModeConfiguration {

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

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static ClassProxyCheck distributedLockClassProxyCheck(ObjectProvider<LockOperationSource> operations) {
            return new ClassProxyCheck(operations::getObject);
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static SelfInvocationReport distributedLockSelfInvocationReport(ConfigurableListableBeanFactory beanFactory) {
            return new SelfInvocationReport(beanFactory);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @Conditional(OnAopModeCondition.AspectJ.class)
    static class AspectJModeConfiguration {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static AspectJModeConfigurer distributedLockAspectConfigurer(
                LockOperationSource distributedLockOperationSource,
                DistributedLockInterceptor distributedLockInterceptor) {
            return new AspectJModeConfigurer(distributedLockOperationSource, distributedLockInterceptor);
        }
    }

    private static DistributedLockProperties properties(Environment environment) {
        return Binder.get(environment).bindOrCreate("distributed-lock", DistributedLockProperties.class);
    }

    /**
     * Whether {@code distributed-lock.aop.mode} is the given mode, bound as the properties bean
     * binds it (so every spelling that binds matches, and a value that does not fails start-up).
     */
    abstract static class OnAopModeCondition extends SpringBootCondition {

        private final DistributedLockProperties.Aop.Mode mode;

        OnAopModeCondition(DistributedLockProperties.Aop.Mode mode) {
            this.mode = mode;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            DistributedLockProperties.Aop.Mode configured = Binder.get(context.getEnvironment())
                .bind("distributed-lock.aop.mode", DistributedLockProperties.Aop.Mode.class)
                .orElse(DistributedLockProperties.Aop.Mode.PROXY);
            String message = "distributed-lock.aop.mode is " + configured;
            return (configured == this.mode) ? ConditionOutcome.match(message) : ConditionOutcome.noMatch(message);
        }

        static final class Proxy extends OnAopModeCondition {

            Proxy() {
                super(DistributedLockProperties.Aop.Mode.PROXY);
            }
        }

        static final class AspectJ extends OnAopModeCondition {

            AspectJ() {
                super(DistributedLockProperties.Aop.Mode.ASPECTJ);
            }
        }
    }

    /**
     * In aspectj mode: hands the interceptor to the woven aspect while the context runs, checks
     * the annotations of every bean as it is created (as the proxy advisor does when it decides
     * whether to proxy a bean; an invalid one fails start-up), warns of annotated methods that are
     * not woven, and fails start-up if annotated methods exist without a registry.
     */
    static final class AspectJModeConfigurer
            implements BeanPostProcessor, SmartInitializingSingleton, DisposableBean {

        private final WeavingCheck weaving;

        private final DistributedLockInterceptor interceptor;

        AspectJModeConfigurer(LockOperationSource operations, DistributedLockInterceptor interceptor) {
            this.weaving = new WeavingCheck(operations);
            this.interceptor = interceptor;
            DistributedLockAspect.configure(interceptor);
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            this.weaving.check(AopProxyUtils.ultimateTargetClass(bean), beanName);
            return bean;
        }

        @Override
        public void afterSingletonsInstantiated() {
            this.interceptor.verifyRegistry();
        }

        @Override
        public void destroy() {
            DistributedLockAspect.release(this.interceptor);
        }
    }

    /** Registers Spring's infrastructure auto-proxy creator unless a more capable one exists. */
    static class AutoProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {

        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        }
    }
}
