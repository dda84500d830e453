package io.github.distlock.autoconfigure;

import io.github.distlock.FencedLock;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.integration.DistributedLockIntegrationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/** The Spring Integration view of the lock registry: present with Spring Integration, absent without, backs off. */
class DistributedLockIntegrationAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockIntegrationAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=in-memory");

    @Test
    void withSpringIntegrationTheRegistryIsAlsoASpringIntegrationLockRegistry() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(org.springframework.integration.support.locks.LockRegistry.class)
                .hasBean("distributedLockIntegrationRegistry");
            DistributedLockIntegrationRegistry adapter = context.getBean(DistributedLockIntegrationRegistry.class);
            LockRegistry registry = context.getBean(LockRegistry.class);
            assertThat(adapter.getRegistry()).isSameAs(registry);
            assertThat(adapter.isFair()).isTrue();
            // A lock taken through Spring Integration is the registry's lock of that key.
            FencedLock lock = adapter.obtain("leader");
            lock.lock();
            try {
                assertThat(registry.obtain("leader").isLockedByCurrentThread()).isTrue();
            }
            finally {
                lock.unlock();
            }
        });
    }

    @Test
    void withoutSpringIntegrationThereIsNoAdapter() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.integration"))
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(LockRegistry.class)
                .doesNotHaveBean("distributedLockIntegrationRegistry"));
    }

    @Test
    void backsOffToTheApplicationsSpringIntegrationLockRegistry() {
        this.contextRunner.withUserConfiguration(ApplicationLockRegistry.class).run((context) -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(org.springframework.integration.support.locks.LockRegistry.class)
                .doesNotHaveBean(DistributedLockIntegrationRegistry.class);
            assertThat(context.getBean(org.springframework.integration.support.locks.LockRegistry.class))
                .isInstanceOf(DefaultLockRegistry.class);
        });
    }

    @Test
    void anApplicationRegistryIsAdaptedToo() {
        this.contextRunner.withUserConfiguration(ApplicationDistlockRegistry.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(DistributedLockIntegrationRegistry.class).getRegistry())
                .isSameAs(context.getBean("applicationRegistry"));
        });
    }

    @Test
    void switchedOffWithTheLocks() {
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(org.springframework.integration.support.locks.LockRegistry.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationLockRegistry {

        @Bean
        DefaultLockRegistry applicationIntegrationRegistry() {
            return new DefaultLockRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ApplicationDistlockRegistry {

        @Bean
        InMemoryLockRegistry applicationRegistry() {
            return new InMemoryLockRegistry();
        }
    }
}
