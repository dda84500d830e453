package io.github.distlock.autoconfigure;

import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint;
import io.github.distlock.actuate.DistributedLocksEndpointWebExtension;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When {@link DistributedLocksEndpointAutoConfiguration} configures the {@code distributedlocks}
 * endpoint.
 */
class DistributedLocksEndpointAutoConfigurationTests {

    private static final String ACCESS = "management.endpoint.distributedlocks.access=read-only";

    private static final String EXPOSURE = "management.endpoints.web.exposure.include=health,distributedlocks";

    // Binds "read-only" to Access.READ_ONLY the way SpringApplication's environment does.
    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLocksEndpointAutoConfiguration.class));

    @Test
    void endpointIsOffByDefaultEvenWhenExposed() {
        this.contextRunner.withPropertyValues(EXPOSURE)
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    @Test
    void endpointNeedsAccessAndExposure() {
        this.contextRunner.withPropertyValues(ACCESS)
            .run((context) -> assertThat(context).doesNotHaveBean(DistributedLocksEndpoint.class));
        this.contextRunner.withPropertyValues(ACCESS, EXPOSURE)
            .run((context) -> assertThat(context).hasSingleBean(DistributedLocksEndpoint.class)
                .hasSingleBean(DistributedLocksEndpointWebExtension.class));
    }

    @Test
    void webExtensionOnlyWhenExposedOverHttp() {
        this.contextRunner
            .withPropertyValues(ACCESS, "management.endpoints.jmx.exposure.include=distributedlocks",
                    "spring.jmx.enabled=true")
            .run((context) -> assertThat(context).hasSingleBean(DistributedLocksEndpoint.class)
                .doesNotHaveBean(DistributedLocksEndpointWebExtension.class));
    }

    @Test
    void endpointBacksOffWithoutActuator() {
        this.contextRunner.withPropertyValues(ACCESS, EXPOSURE)
            .withClassLoader(new FilteredClassLoader(Endpoint.class.getPackageName(),
                    "org.springframework.boot.actuate.autoconfigure"))
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLocksEndpoint.class));
    }

    @Test
    void theInMemoryStoreHasTheEndpointToo() {
        this.contextRunner.withPropertyValues(ACCESS, EXPOSURE, "distributed-lock.store=in-memory")
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(DistributedLocksEndpoint.class);
                FencedLock lock = context.getBean(LockRegistry.class).obtain("orders/7");
                lock.lock();
                try {
                    DistributedLocksEndpoint.LockDescriptor described = context.getBean(DistributedLocksEndpoint.class)
                        .lock(new String[] { "orders", "7" });
                    assertThat(described.holder()).isNotNull();
                    assertThat(described.holder().owner()).isEqualTo("in-memory");
                    assertThat(described.holder().thread()).isEqualTo(Thread.currentThread().getName());
                    assertThat(described.holder().fence()).isEqualTo(lock.getFence());
                    assertThat(context.getBean(DistributedLocksEndpoint.class).locks().locks())
                        .extracting(DistributedLocksEndpoint.LockDescriptor::key)
                        .containsExactly("orders/7");
                }
                finally {
                    lock.unlock();
                }
            });
    }
}
