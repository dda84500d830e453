package io.github.distlock.autoconfigure;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.etcd.jetcd.Client;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import io.github.distlock.health.JdbcLockRegistryHealthIndicator;
import io.github.distlock.health.LockRegistryHealthIndicator;
import io.github.distlock.health.RedisLockRegistryHealthIndicator;
import io.github.distlock.health.ZookeeperLockRegistryHealthIndicator;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Auto-configuration of the {@code distributedLock} health indicator for a lock registry that
 * depends on a store (etcd, Redis, ZooKeeper or JDBC), when Spring Boot's health support is on the class path: a
 * {@link LockRegistryHealthIndicator} with the store's own details; with several such registries
 * (the application's own, a primary one among them or not), a composite of one indicator per
 * registry under its bean name. The in-memory registry has no store that could fail and gets none. Switched off with
 * {@code management.health.distributed-lock.enabled=false}.
 *
 * <p>Runs after {@link DistributedLockAutoConfiguration}, which defines the registry. Spring Boot
 * collects health contributors when it creates its registry of them, not through a condition, so
 * no order relative to its health auto-configurations is needed (its own contributors have none).
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnDistributedLockEnabled
public final class DistributedLockHealthAutoConfiguration {

    private static final String ETCD_CLIENT = "io.etcd.jetcd.Client";

    private static final Set<String> STORE_REGISTRIES = Set.of("io.github.distlock.etcd.EtcdLockRegistry",
            "io.github.distlock.redis.RedisLockRegistry", "io.github.distlock.zookeeper.ZookeeperLockRegistry",
            "io.github.distlock.jdbc.JdbcLockRegistry");

    /**
     * Several registries of stores (the application's own): one indicator each, under the
     * registry's bean name, in one composite; the single-registry configurations below back off.
     */
    @Configuration(proxyBeanMethods = false)
    @Conditional(SeveralStoreRegistriesCondition.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class SeveralRegistriesHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        CompositeHealthContributor distributedLockHealthIndicator(Map<String, InspectableLockRegistry> registries) {
            Map<String, HealthIndicator> indicators = new TreeMap<>();
            registries.forEach((name, registry) -> {
                HealthIndicator indicator = indicatorOf(registry);
                if (indicator != null) {
                    indicators.put(name, indicator);
                }
            });
            return CompositeHealthContributor.fromMap(indicators);
        }

        /** @return the store's indicator for {@code registry}, {@code null} for one without a store (in-memory) */
        private static @Nullable HealthIndicator indicatorOf(InspectableLockRegistry registry) {
            // Each store's classes are touched only once its client is known to be on the class path.
            if (ClassUtils.isPresent(ETCD_CLIENT, null) && EtcdIndicator.accepts(registry)) {
                return EtcdIndicator.of(registry);
            }
            if (ClassUtils.isPresent(RedisStoreConfiguration.LETTUCE_CLIENT, null) && RedisIndicator.accepts(registry)) {
                return RedisIndicator.of(registry);
            }
            if (ClassUtils.isPresent(ZookeeperStoreConfiguration.CURATOR_FRAMEWORK, null)
                    && ZookeeperIndicator.accepts(registry)) {
                return ZookeeperIndicator.of(registry);
            }
            if (registry instanceof JdbcLockRegistry jdbc) {
                return new JdbcLockRegistryHealthIndicator(jdbc);
            }
            return null;
        }

        private static final class EtcdIndicator {

            static boolean accepts(InspectableLockRegistry registry) {
                return registry instanceof EtcdLockRegistry;
            }

            static HealthIndicator of(InspectableLockRegistry registry) {
                return new EtcdLockRegistryHealthIndicator((EtcdLockRegistry) registry);
            }
        }

        private static final class RedisIndicator {

            static boolean accepts(InspectableLockRegistry registry) {
                return registry instanceof RedisLockRegistry;
            }

            static HealthIndicator of(InspectableLockRegistry registry) {
                return new RedisLockRegistryHealthIndicator((RedisLockRegistry) registry);
            }
        }

        private static final class ZookeeperIndicator {

            static boolean accepts(InspectableLockRegistry registry) {
                return registry instanceof ZookeeperLockRegistry;
            }

            static HealthIndicator of(InspectableLockRegistry registry) {
                return new ZookeeperLockRegistryHealthIndicator((ZookeeperLockRegistry) registry);
            }
        }
    }

    /**
     * Whether the bean factory has several lock registries that depend on a store, or at most one,
     * counted once the application's bean definitions are in (at parse time there would be none yet).
     */
    abstract static class StoreRegistryCountCondition extends SpringBootCondition implements ConfigurationCondition {

        private final boolean several;

        StoreRegistryCountCondition(boolean several) {
            this.several = several;
        }

        @Override
        public ConfigurationPhase getConfigurationPhase() {
            return ConfigurationPhase.REGISTER_BEAN;
        }

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            long stores = storeRegistries(context);
            ConditionMessage message = ConditionMessage
                .forCondition(this.several ? "Several store lock registries" : "One store lock registry")
                .because(stores + " store registries");
            return ((stores > 1) == this.several) ? ConditionOutcome.match(message) : ConditionOutcome.noMatch(message);
        }
    }

    /** More than one lock registry that depends on a store. */
    static final class SeveralStoreRegistriesCondition extends StoreRegistryCountCondition {

        SeveralStoreRegistriesCondition() {
            super(true);
        }
    }

    /** At most one lock registry that depends on a store. */
    static final class OneStoreRegistryCondition extends StoreRegistryCountCondition {

        OneStoreRegistryCondition() {
            super(false);
        }
    }

    /** @return how many beans of the bean factory are registries of the stores that have an indicator */
    private static long storeRegistries(ConditionContext context) {
        ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
        if (beanFactory == null) {
            return 0;
        }
        return Arrays.stream(beanFactory.getBeanNamesForType(InspectableLockRegistry.class, true, false))
            .map((name) -> beanFactory.getType(name, false))
            .filter(DistributedLockHealthAutoConfiguration::isStoreRegistry)
            .count();
    }

    /** By class name, so that no store's classes are loaded for a store whose client is absent. */
    private static boolean isStoreRegistry(@Nullable Class<?> type) {
        for (Class<?> candidate = type; candidate != null; candidate = candidate.getSuperclass()) {
            if (STORE_REGISTRIES.contains(candidate.getName())) {
                return true;
            }
        }
        return false;
    }

    // Nested so that each store's types and the health indicator condition are only read once
    // the store's client and health support are known to be present.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Client.class)
    @ConditionalOnSingleCandidate(EtcdLockRegistry.class)
    @Conditional(OneStoreRegistryCondition.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class EtcdRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        EtcdLockRegistryHealthIndicator distributedLockHealthIndicator(EtcdLockRegistry registry) {
            return new EtcdLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = RedisStoreConfiguration.LETTUCE_CLIENT)
    @ConditionalOnSingleCandidate(RedisLockRegistry.class)
    @Conditional(OneStoreRegistryCondition.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class RedisRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        RedisLockRegistryHealthIndicator distributedLockHealthIndicator(RedisLockRegistry registry) {
            return new RedisLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = ZookeeperStoreConfiguration.CURATOR_FRAMEWORK)
    @ConditionalOnSingleCandidate(ZookeeperLockRegistry.class)
    @Conditional(OneStoreRegistryCondition.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class ZookeeperRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        ZookeeperLockRegistryHealthIndicator distributedLockHealthIndicator(ZookeeperLockRegistry registry) {
            return new ZookeeperLockRegistryHealthIndicator(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(JdbcLockRegistry.class)
    @Conditional(OneStoreRegistryCondition.class)
    @ConditionalOnEnabledHealthIndicator("distributed-lock")
    static class JdbcRegistryHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "distributedLockHealthIndicator")
        JdbcLockRegistryHealthIndicator distributedLockHealthIndicator(JdbcLockRegistry registry) {
            return new JdbcLockRegistryHealthIndicator(registry);
        }
    }
}
