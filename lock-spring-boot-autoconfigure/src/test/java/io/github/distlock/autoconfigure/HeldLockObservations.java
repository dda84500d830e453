package io.github.distlock.autoconfigure;

import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.actuate.DistributedLocksEndpoint.LockDescriptor;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** What the meters and the {@code distributedlocks} endpoint show of a held lock, on any store. */
final class HeldLockObservations {

    private HeldLockObservations() {
    }

    /** @return {@code runner} with the lock meters, a simple meter registry and the endpoint */
    static ApplicationContextRunner withMetersAndEndpoint(ApplicationContextRunner runner) {
        return runner
            .withConfiguration(AutoConfigurations.of(DistributedLockMetricsAutoConfiguration.class,
                    DistributedLocksEndpointAutoConfiguration.class, MetricsAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
            .withPropertyValues("management.endpoint.distributedlocks.access=read-only",
                    "management.endpoints.web.exposure.include=distributedlocks");
    }

    /**
     * Holds {@code orders/8} and checks the meters and the endpoint while it is held and after.
     * @param namespace the registry's namespace, as the meters tag it and the endpoint shows it
     */
    static void assertShowAHeldLock(AssertableApplicationContext context, Class<?> registryType, String namespace)
            throws InterruptedException {
        InspectableLockRegistry registry = context.getBean(InspectableLockRegistry.class);
        assertThat(registry).isInstanceOf(registryType);
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        DistributedLocksEndpoint endpoint = context.getBean(DistributedLocksEndpoint.class);
        FencedLock lock = registry.obtain("orders/8", true);
        assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(meters.get("distributed.lock.holds").tag("namespace", namespace).gauge().value()).isEqualTo(1.0);
            assertThat(meters.get("distributed.lock.session.alive").gauge().value()).isEqualTo(1.0);
            assertThat(meters.get("distributed.lock.acquisitions").tag("outcome", "acquired").functionCounter().count())
                .isEqualTo(1.0);
            LockDescriptor described = endpoint.lock(new String[] { "orders", "8" });
            assertThat(described.holder()).isNotNull();
            assertThat(described.holder().owner()).isEqualTo(registry.getOwnerIdentity());
            assertThat(described.holder().thread()).isEqualTo(Thread.currentThread().getName());
            assertThat(described.holder().fence()).isEqualTo(lock.getFence());
            assertThat(endpoint.locks().namespace()).isEqualTo(namespace);
            assertThat(endpoint.locks().locks()).extracting(LockDescriptor::key).contains("orders/8");
        }
        finally {
            lock.unlock();
        }
        assertThat(meters.get("distributed.lock.holds").gauge().value()).isZero();
        assertThat(endpoint.lock(new String[] { "orders", "8" }).holder()).isNull();
    }
}
