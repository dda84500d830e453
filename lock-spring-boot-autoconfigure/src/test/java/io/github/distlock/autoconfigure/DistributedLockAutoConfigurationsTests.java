package io.github.distlock.autoconfigure;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import io.github.distlock.metrics.LockRegistryMetrics;
import io.github.distlock.metrics.MicrometerLockMetrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.Configurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.annotation.AnnotatedElementUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distributed-lock auto-configurations together: registered, ordered after the lock
 * auto-configuration (and the metrics one after Spring Boot's meter registries), switched off
 * together, and each one absent without harm to the others when what it needs is not on the class
 * path.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockAutoConfigurationsTests {


    // Everything on, as an application with Actuator, Micrometer and the endpoint exposed has it.
    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DistributedLocksEndpointAutoConfiguration.class,
                DistributedLockDisabledAutoConfiguration.class, DistributedLockIntegrationAutoConfiguration.class, DistributedLockMetricsAutoConfiguration.class, DistributedLockHealthAutoConfiguration.class,
                DistributedLockAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class, MetricsAutoConfiguration.class))
        .withPropertyValues("management.endpoint.distributedlocks.access=read-only",
                "management.endpoints.web.exposure.include=distributedlocks");

    @Test
    void everyAutoConfigurationIsRegistered() {
        List<String> registered = ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader())
            .getCandidates()
            .stream()
            .filter((candidate) -> candidate.startsWith("io.github.distlock."))
            .toList();
        assertThat(registered).containsExactlyInAnyOrder(DistributedLockAutoConfiguration.class.getName(),
                DistributedLockHealthAutoConfiguration.class.getName(),
                DistributedLockMetricsAutoConfiguration.class.getName(),
                DistributedLocksEndpointAutoConfiguration.class.getName(),
                DistributedLockIntegrationAutoConfiguration.class.getName(),
                DistributedLockWebMvcAutoConfiguration.class.getName(),
                DistributedLockDisabledAutoConfiguration.class.getName());
    }

    @Test
    void eachConcernRunsAfterTheLockAutoConfiguration() {
        for (Concern concern : Concern.values()) {
            AutoConfiguration autoConfiguration = AnnotatedElementUtils
                .findMergedAnnotation(concern.autoConfiguration, AutoConfiguration.class);
            assertThat(autoConfiguration).as(concern.name()).isNotNull();
            assertThat(autoConfiguration.after()).as(concern.name()).contains(DistributedLockAutoConfiguration.class);
        }
        List<Class<?>> sorted = sorted(DistributedLocksEndpointAutoConfiguration.class,
                DistributedLockMetricsAutoConfiguration.class, DistributedLockHealthAutoConfiguration.class,
                DistributedLockAutoConfiguration.class);
        assertThat(sorted.get(0)).isEqualTo(DistributedLockAutoConfiguration.class);
    }

    @Test
    void metricsRunAfterSpringBootsMeterRegistries() {
        List<Class<?>> sorted = sorted(DistributedLockMetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                MetricsAutoConfiguration.class);
        assertThat(sorted.indexOf(DistributedLockMetricsAutoConfiguration.class))
            .isGreaterThan(sorted.indexOf(CompositeMeterRegistryAutoConfiguration.class))
            .isGreaterThan(sorted.indexOf(SimpleMetricsExportAutoConfiguration.class));
    }

    @Test
    void withEverythingOnTheClassPathEveryConcernIsConfigured() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed().hasSingleBean(EtcdLockRegistry.class).hasSingleBean(MicrometerLockMetrics.class);
            assertConcerns(context, EnumSet.noneOf(Concern.class));
            assertThat(context.getBean("distributedLockHealthIndicator"))
                .isInstanceOf(EtcdLockRegistryHealthIndicator.class);
        });
    }

    @ParameterizedTest
    @EnumSource(Concern.class)
    void withoutItsLibraryAConcernIsAbsentAndTheOthersRemain(Concern missing) {
        this.contextRunner.withClassLoader(new FilteredClassLoader(missing.library)).run((context) -> {
            assertThat(context).hasNotFailed().hasSingleBean(EtcdLockRegistry.class);
            assertConcerns(context, EnumSet.of(missing));
        });
    }

    @Test
    void withNoneOfTheirLibrariesLocksStillWork() {
        this.contextRunner
            .withClassLoader(new FilteredClassLoader(
                    Arrays.stream(Concern.values()).map((concern) -> concern.library).toArray(String[]::new)))
            .withPropertyValues("distributed-lock.store=in-memory")
            .withUserConfiguration(DistributedLockAutoConfigurationTests.LockedService.class)
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class).doesNotHaveBean(LockMetrics.class);
                assertConcerns(context, EnumSet.allOf(Concern.class));
                assertThat(context.getBean(DistributedLockAutoConfigurationTests.Locked.class).key())
                    .isEqualTo("locked");
            });
    }

    @Test
    void switchingOffSwitchesOffEveryConcern() {
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false").run((context) -> {
            assertThat(context).hasNotFailed()
                .doesNotHaveBean(DistributedLockProperties.class)
                .doesNotHaveBean(LockRegistry.class)
                .doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(LockMetrics.class);
            assertConcerns(context, EnumSet.allOf(Concern.class));
        });
    }

    @Test
    void switchedOffAWarningNamesTheAnnotatedMethodsThatRunWithoutALock(CapturedOutput output) {
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false")
            .withUserConfiguration(DistributedLockAutoConfigurationTests.LockedService.class)
            .run((context) -> {
                assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockAdvisor.class);
                assertThat(context.getBean(DistributedLockAutoConfigurationTests.Locked.class).unlockedKey())
                    .isEqualTo("no lock");
                String locked = DistributedLockAutoConfigurationTests.Locked.class.getName();
                assertThat(output).containsOnlyOnce("distributed-lock.enabled=false: 2 @DistributedLock method(s) run "
                        + "without their lock")
                    .contains(locked + ".key()").contains(locked + ".unlockedKey()");
            });
    }

    @Test
    void switchedOnOrWithoutAnnotatedMethodsNothingIsSaid(CapturedOutput output) {
        this.contextRunner.withUserConfiguration(DistributedLockAutoConfigurationTests.LockedService.class)
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(DistributedLockDisabledAutoConfiguration.UnlockedMethodsReport.class));
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(DistributedLockDisabledAutoConfiguration.UnlockedMethodsReport.class));
        assertThat(output).doesNotContain("run without their lock");
    }

    @Test
    void withTwoRegistriesTheConcernsThatNeedOneBackOffInsteadOfFailingStartUp() {
        this.contextRunner.withUserConfiguration(TwoRegistries.class).run((context) -> {
            assertThat(context).hasNotFailed().hasBean("distributedLockMetrics");
            assertThat(context).doesNotHaveBean("lockRegistryMetrics")
                .doesNotHaveBean("distributedLocksEndpoint")
                .doesNotHaveBean("distributedLockIntegrationRegistry");
        });
    }

    @Test
    void withTwoRegistriesOneOfThemPrimaryTheConcernsServeIt() {
        this.contextRunner.withUserConfiguration(TwoRegistries.class, PrimaryRegistry.class).run((context) -> {
            assertThat(context).hasNotFailed()
                .hasBean("lockRegistryMetrics")
                .hasBean("distributedLocksEndpoint")
                .hasBean("distributedLockIntegrationRegistry");
        });
    }

    @Test
    void concernsNeedNotTheLockAutoConfiguration() {
        // As when an application excludes DistributedLockAutoConfiguration but not the others.
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations
                .of(Arrays.stream(Concern.values()).map((concern) -> concern.autoConfiguration).toArray(Class<?>[]::new)))
            .withConfiguration(AutoConfigurations.of(CompositeMeterRegistryAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class, MetricsAutoConfiguration.class))
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockRegistry.class)
                .doesNotHaveBean(LockRegistryMetrics.class)
                .doesNotHaveBean("distributedLockHealthIndicator")
                .doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoRegistries {

        @Bean
        InMemoryLockRegistry ordersRegistry() {
            return new InMemoryLockRegistry();
        }

        @Bean
        InMemoryLockRegistry jobsRegistry() {
            return new InMemoryLockRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PrimaryRegistry {

        @Bean
        @Primary
        InMemoryLockRegistry primaryRegistry() {
            return new InMemoryLockRegistry();
        }
    }

    /** Asserts by bean name, so that the names stay what applications may have overridden. */
    private static void assertConcerns(AssertableApplicationContext context, Set<Concern> absent) {
        for (Concern concern : Concern.values()) {
            for (String bean : concern.beans) {
                if (absent.contains(concern)) {
                    assertThat(context).as(concern.name()).doesNotHaveBean(bean);
                }
                else {
                    assertThat(context).as(concern.name()).hasBean(bean);
                }
            }
        }
    }

    private static List<Class<?>> sorted(Class<?>... autoConfigurations) {
        return Arrays.asList(Configurations.getClasses(AutoConfigurations.of(autoConfigurations)));
    }

    /** A concern with an auto-configuration of its own, the library it needs, and the beans it defines. */
    enum Concern {

        METRICS(DistributedLockMetricsAutoConfiguration.class, "io.micrometer", "distributedLockMetrics",
                "lockRegistryMetrics"),

        HEALTH(DistributedLockHealthAutoConfiguration.class, "org.springframework.boot.health",
                "distributedLockHealthIndicator"),

        ENDPOINT(DistributedLocksEndpointAutoConfiguration.class, "org.springframework.boot.actuate",
                "distributedLocksEndpoint"),

        INTEGRATION(DistributedLockIntegrationAutoConfiguration.class, "org.springframework.integration",
                "distributedLockIntegrationRegistry");

        final Class<?> autoConfiguration;

        final String library;

        final String[] beans;

        Concern(Class<?> autoConfiguration, String library, String... beans) {
            this.autoConfiguration = autoConfiguration;
            this.library = library;
            this.beans = beans;
        }
    }
}
