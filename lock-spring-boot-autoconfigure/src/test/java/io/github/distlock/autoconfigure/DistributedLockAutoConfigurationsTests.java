package io.github.distlock.autoconfigure;

import java.util.Arrays;
import java.util.List;

import io.github.distlock.LockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.EtcdLockRegistryHealthIndicator;
import io.github.distlock.metrics.EtcdLockRegistryMetrics;
import io.github.distlock.metrics.MicrometerLockMetrics;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.Configurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.annotation.AnnotatedElementUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distributed-lock auto-configurations together: registered, ordered after the lock
 * auto-configuration (and the metrics one after Spring Boot's meter registries), switched off
 * together, and each one absent without harm to the others when what it needs is not on the class
 * path.
 */
class DistributedLockAutoConfigurationsTests {

    private static final List<Class<?>> CONCERNS = List.of(DistributedLockHealthAutoConfiguration.class,
            DistributedLockMetricsAutoConfiguration.class, DistributedLocksEndpointAutoConfiguration.class);

    private static final String HEALTH_INDICATOR = "distributedLockHealthIndicator";

    // Everything on, as an application with Actuator, Micrometer and the endpoint exposed has it.
    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DistributedLocksEndpointAutoConfiguration.class,
                DistributedLockMetricsAutoConfiguration.class, DistributedLockHealthAutoConfiguration.class,
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
                DistributedLocksEndpointAutoConfiguration.class.getName());
    }

    @Test
    void eachConcernRunsAfterTheLockAutoConfiguration() {
        for (Class<?> concern : CONCERNS) {
            AutoConfiguration autoConfiguration = AnnotatedElementUtils.findMergedAnnotation(concern,
                    AutoConfiguration.class);
            assertThat(autoConfiguration).as(concern.getSimpleName()).isNotNull();
            assertThat(autoConfiguration.after()).as(concern.getSimpleName())
                .contains(DistributedLockAutoConfiguration.class);
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
        this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
            .hasSingleBean(EtcdLockRegistry.class)
            .hasSingleBean(DistributedLockAdvisor.class)
            .hasSingleBean(MicrometerLockMetrics.class)
            .hasSingleBean(EtcdLockRegistryMetrics.class)
            .hasSingleBean(EtcdLockRegistryHealthIndicator.class)
            .hasSingleBean(DistributedLocksEndpoint.class));
    }

    @Test
    void withoutMicrometerTheOtherConcernsRemain() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("io.micrometer"))
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(EtcdLockRegistry.class)
                .doesNotHaveBean(LockMetrics.class)
                .doesNotHaveBean(EtcdLockRegistryMetrics.class)
                .hasSingleBean(EtcdLockRegistryHealthIndicator.class)
                .hasSingleBean(DistributedLocksEndpoint.class));
    }

    @Test
    void withoutHealthSupportTheOtherConcernsRemain() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(EtcdLockRegistry.class)
                .hasSingleBean(MicrometerLockMetrics.class)
                .hasSingleBean(EtcdLockRegistryMetrics.class)
                .doesNotHaveBean(HEALTH_INDICATOR)
                .hasSingleBean(DistributedLocksEndpoint.class));
    }

    @Test
    void withoutActuatorTheOtherConcernsRemain() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
            .run((context) -> assertThat(context).hasNotFailed()
                .hasSingleBean(EtcdLockRegistry.class)
                .hasSingleBean(MicrometerLockMetrics.class)
                .hasSingleBean(EtcdLockRegistryMetrics.class)
                .hasSingleBean(EtcdLockRegistryHealthIndicator.class)
                .doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    @Test
    void withNoneOfThemLocksStillWork() {
        this.contextRunner
            .withClassLoader(new FilteredClassLoader("io.micrometer", "org.springframework.boot.health",
                    "org.springframework.boot.actuate"))
            .withPropertyValues("distributed-lock.store=in-memory")
            .withUserConfiguration(DistributedLockAutoConfigurationTests.LockedService.class)
            .run((context) -> {
                assertThat(context).hasNotFailed()
                    .hasSingleBean(LockRegistry.class)
                    .doesNotHaveBean(LockMetrics.class)
                    .doesNotHaveBean(HEALTH_INDICATOR)
                    .doesNotHaveBean(DistributedLocksEndpoint.class);
                assertThat(context.getBean(DistributedLockAutoConfigurationTests.Locked.class).key())
                    .isEqualTo("locked");
            });
    }

    @Test
    void switchingOffSwitchesOffEveryConcern() {
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(DistributedLockProperties.class)
                .doesNotHaveBean(LockRegistry.class)
                .doesNotHaveBean(DistributedLockAdvisor.class)
                .doesNotHaveBean(LockMetrics.class)
                .doesNotHaveBean(EtcdLockRegistryMetrics.class)
                .doesNotHaveBean(HEALTH_INDICATOR)
                .doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    @Test
    void concernsNeedNotTheLockAutoConfiguration() {
        // As when an application excludes DistributedLockAutoConfiguration but not the others.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CONCERNS.toArray(Class<?>[]::new)))
            .withConfiguration(AutoConfigurations.of(CompositeMeterRegistryAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class, MetricsAutoConfiguration.class))
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockRegistry.class)
                .doesNotHaveBean(EtcdLockRegistryMetrics.class)
                .doesNotHaveBean(HEALTH_INDICATOR)
                .doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    private static List<Class<?>> sorted(Class<?>... autoConfigurations) {
        return Arrays.asList(Configurations.getClasses(AutoConfigurations.of(autoConfigurations)));
    }
}
