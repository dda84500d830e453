package io.github.distlock.autoconfigure;

import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import io.etcd.jetcd.Client;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import io.github.distlock.health.JdbcLockRegistryHealthIndicator;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.RedisLockRegistryHealthIndicator;
import io.github.distlock.jdbc.JdbcLockRegistry;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link DistributedLockHealthAutoConfiguration} configures the health indicator of the etcd,
 * Redis or JDBC lock registry.
 */
class DistributedLockHealthAutoConfigurationTests {

    private static final String NAME = "distributedLockHealthIndicator";

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockHealthAutoConfiguration.class));

    @Test
    void indicatesTheHealthOfTheEtcdRegistry() {
        this.contextRunner.run((context) -> assertThat(context).hasSingleBean(EtcdLockRegistryHealthIndicator.class)
            .hasBean(NAME));
    }

    @Test
    void indicatesTheHealthOfTheRedisRegistry() {
        // No Redis runs: the registry connects in the background, and the indicator exists regardless.
        this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=redis", "spring.data.redis.port=1")
            .run((context) -> assertThat(context).hasSingleBean(RedisLockRegistryHealthIndicator.class)
                .doesNotHaveBean(EtcdLockRegistryHealthIndicator.class)
                .hasBean(NAME));
    }

    @Test
    void indicatesTheHealthOfTheJdbcRegistry() {
        this.contextRunner.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=jdbc")
            .run((context) -> assertThat(context).hasSingleBean(JdbcLockRegistryHealthIndicator.class)
                .doesNotHaveBean(EtcdLockRegistryHealthIndicator.class)
                .hasBean(NAME));
    }

    @Test
    void backsOffWithoutHealthSupport() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NAME));
    }

    @Test
    void backsOffForTheInMemoryStore() {
        this.contextRunner.withPropertyValues("distributed-lock.store=in-memory")
            .run((context) -> assertThat(context).hasSingleBean(InMemoryLockRegistry.class).doesNotHaveBean(NAME));
    }

    @Test
    void backsOffForAnOwnRegistryOfAnotherKind() {
        this.contextRunner.withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasSingleBean(LockRegistry.class).doesNotHaveBean(NAME));
    }

    @Test
    void backsOffOnAnOwnIndicatorOfTheSameName() {
        this.contextRunner.withUserConfiguration(OwnIndicator.class)
            .run((context) -> assertThat(context).doesNotHaveBean(EtcdLockRegistryHealthIndicator.class)
                .hasBean(NAME));
    }

    @Test
    void severalRegistriesOfStoresGetOneIndicatorEachInAComposite() {
        this.contextRunner.withUserConfiguration(SeveralRegistries.class).run((context) -> {
            assertThat(context).hasNotFailed().hasBean(NAME).doesNotHaveBean(EtcdLockRegistryHealthIndicator.class);
            CompositeHealthContributor composite = context.getBean(NAME, CompositeHealthContributor.class);
            Map<String, Object> indicators = new TreeMap<>();
            composite.stream().forEach((entry) -> indicators.put(entry.name(), entry.contributor()));
            assertThat(indicators).containsOnlyKeys("billingLocks", "orderLocks");
            assertThat(indicators.get("orderLocks")).isInstanceOf(EtcdLockRegistryHealthIndicator.class);
            assertThat(indicators.get("billingLocks")).isInstanceOf(JdbcLockRegistryHealthIndicator.class);
        });
    }

    @Test
    void canBeSwitchedOff() {
        this.contextRunner.withPropertyValues("management.health.distributed-lock.enabled=false")
            .run((context) -> assertThat(context).doesNotHaveBean(NAME));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {

        @Bean
        InMemoryLockRegistry myRegistry() {
            return new InMemoryLockRegistry();
        }
    }

    /** Two registries on two stores, neither primary, and an in-memory one, which has no store to watch. */
    @Configuration(proxyBeanMethods = false)
    static class SeveralRegistries {

        @Bean(destroyMethod = "close")
        Client ordersEtcd() {
            return Client.builder().endpoints("http://127.0.0.1:1").build();
        }

        @Bean(destroyMethod = "close")
        EtcdLockRegistry orderLocks(Client ordersEtcd) {
            return EtcdLockRegistry.builder(ordersEtcd).namespace("/orders/").build();
        }

        @Bean(destroyMethod = "close")
        JdbcLockRegistry billingLocks() {
            JdbcDataSource dataSource = new JdbcDataSource();
            dataSource.setURL("jdbc:h2:mem:billing-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            return JdbcLockRegistry.builder(dataSource).build();
        }

        @Bean
        InMemoryLockRegistry localLocks() {
            return new InMemoryLockRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnIndicator {

        @Bean
        HealthIndicator distributedLockHealthIndicator() {
            return () -> Health.up().build();
        }
    }
}
