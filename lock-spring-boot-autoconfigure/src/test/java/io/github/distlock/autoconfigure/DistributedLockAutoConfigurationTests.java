package io.github.distlock.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import io.etcd.jetcd.Client;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockContext;
import io.github.distlock.LockLossListener;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.aop.LockOperationSource;
import io.github.distlock.etcd.EtcdLockRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Which beans {@link DistributedLockAutoConfiguration} contributes, when it backs off, and how
 * its properties bind.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class));

    @Test
    void defaultsToAnEtcdRegistryAndTheAnnotationAdvice() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(Client.class)
                .hasSingleBean(LockRegistry.class)
                .hasSingleBean(EtcdLockRegistry.class)
                .hasSingleBean(DistributedLockAdvisor.class)
                .hasSingleBean(DistributedLockInterceptor.class)
                .hasSingleBean(LockOperationSource.class);
            EtcdLockRegistry registry = context.getBean(EtcdLockRegistry.class);
            assertThat(registry.getNamespace()).isEqualTo("/distributed-lock/");
            assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(10));
            assertThat(registry.getOwnerIdentity()).endsWith(":" + ProcessHandle.current().pid())
                .doesNotContain("@");
            assertThat(context.getBean(DistributedLockAdvisor.class).getOrder())
                .isEqualTo(DistributedLockAdvisor.DEFAULT_ORDER);
            DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
            assertThat(properties.isEnabled()).isTrue();
            assertThat(properties.getStore()).isEqualTo(DistributedLockProperties.Store.ETCD);
            assertThat(properties.getWaitTimeout()).isEqualTo(Duration.ofSeconds(30));
            assertThat(properties.getEtcd().getEndpoints()).containsExactly("http://127.0.0.1:2379");
            assertThat(properties.getEtcd().getConnectTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(properties.getEtcd().getRequestTimeout()).isEqualTo(Duration.ofSeconds(5));
        });
    }

    @Test
    void startUpSaysAtInfoWhichStoreTheLocksUseAndWhere(CapturedOutput output) {
        this.contextRunner.run((context) -> {
            List<String> lines = output.getAll().lines().filter((line) -> line.contains("Distributed locks use")).toList();
            assertThat(lines).as("start-up lines about the store").hasSize(1);
            assertThat(lines.get(0)).contains("INFO")
                .endsWith("Distributed locks use etcd at [http://127.0.0.1:2379], namespace '/distributed-lock/', "
                        + "lease TTL 10s");
        });
        this.contextRunner.withPropertyValues("distributed-lock.etcd.endpoints=http://127.0.0.1:2381",
                "distributed-lock.etcd.namespace=/orders/", "distributed-lock.etcd.lease-ttl=30s")
            .run((context) -> assertThat(output)
                .contains("Distributed locks use etcd at [http://127.0.0.1:2381], namespace '/orders/', lease TTL 30s"));
    }

    @Test
    void lockLossListenerBeansAreRegisteredWithTheRegistry() {
        LockLossListener first = (loss) -> { };
        LockLossListener second = (loss) -> { };
        this.contextRunner.withPropertyValues("distributed-lock.store=in-memory")
            .withBean("first", LockLossListener.class, () -> first)
            .withBean("second", LockLossListener.class, () -> second)
            .run((context) -> {
                InMemoryLockRegistry registry = context.getBean(InMemoryLockRegistry.class);
                assertThat(registry.removeLossListener(first)).as("first registered").isTrue();
                assertThat(registry.removeLossListener(second)).as("second registered").isTrue();
                assertThat(registry.removeLossListener(second)).as("registered once").isFalse();
            });
    }

    @Test
    void defaultOwnerIdentityNamesTheApplication() {
        this.contextRunner.withPropertyValues("spring.application.name=orders")
            .run((context) -> assertThat(context.getBean(EtcdLockRegistry.class).getOwnerIdentity())
                .startsWith("orders@")
                .endsWith(":" + ProcessHandle.current().pid()));
    }

    @Test
    void bindsEveryProperty() {
        this.contextRunner
            .withPropertyValues("distributed-lock.wait-timeout=0", "distributed-lock.aspect-order=42",
                    "distributed-lock.owner-identity=billing-7",
                    "distributed-lock.etcd.endpoints=http://10.0.0.1:2379,http://etcd-2",
                    "distributed-lock.etcd.namespace=/billing/", "distributed-lock.etcd.lease-ttl=3",
                    "distributed-lock.etcd.connect-timeout=750ms", "distributed-lock.etcd.request-timeout=2s",
                    "distributed-lock.etcd.keep-alive-time=12s", "distributed-lock.etcd.keep-alive-timeout=4s",
                    "distributed-lock.etcd.username=billing", "distributed-lock.etcd.password=s3cret-value")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                DistributedLockProperties properties = context.getBean(DistributedLockProperties.class);
                assertThat(properties.getWaitTimeout()).isZero();
                assertThat(properties.getEtcd().getEndpoints()).containsExactly("http://10.0.0.1:2379",
                        "http://etcd-2");
                assertThat(properties.getEtcd().getLeaseTtl()).isEqualTo(Duration.ofSeconds(3));
                assertThat(properties.getEtcd().getConnectTimeout()).isEqualTo(Duration.ofMillis(750));
                assertThat(properties.getEtcd().getKeepAliveTime()).isEqualTo(Duration.ofSeconds(12));
                assertThat(properties.getEtcd().getKeepAliveTimeout()).isEqualTo(Duration.ofSeconds(4));
                assertThat(properties.getEtcd().getUsername()).isEqualTo("billing");
                assertThat(properties.getEtcd().getPassword()).isEqualTo("s3cret-value");
                assertThat(properties.toString()).contains("billing").doesNotContain("s3cret-value");
                EtcdLockRegistry registry = context.getBean(EtcdLockRegistry.class);
                assertThat(registry.getNamespace()).isEqualTo("/billing/");
                assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(3));
                assertThat(registry.getOwnerIdentity()).isEqualTo("billing-7");
                assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42);
            });
    }

    @Test
    void backsOffForTheApplicationsRegistry() {
        this.contextRunner.withUserConfiguration(OwnRegistry.class).run((context) -> {
            assertThat(context).hasSingleBean(LockRegistry.class)
                .doesNotHaveBean(EtcdLockRegistry.class)
                .hasSingleBean(DistributedLockAdvisor.class);
            assertThat(context.getBean(LockRegistry.class)).isSameAs(context.getBean(OwnRegistry.class).registry);
            assertThat(context.getBean(Locked.class).key()).isEqualTo("locked");
        });
    }

    @Test
    void buildsTheRegistryOnTheApplicationsClient() {
        this.contextRunner.withUserConfiguration(OwnClient.class).run((context) -> {
            assertThat(context).hasSingleBean(Client.class).hasSingleBean(EtcdLockRegistry.class);
            assertThat(context.getBean(Client.class)).isSameAs(context.getBean(OwnClient.class).client);
        });
    }

    /** The properties' endpoints (here the default) are not where the application's own client connects. */
    @Test
    void failFastOnTheApplicationsClientNamesThatClientNotThePropertiesEndpoints() {
        this.contextRunner.withUserConfiguration(UnreachableOwnClient.class)
            .withPropertyValues("distributed-lock.etcd.fail-fast=true", "distributed-lock.etcd.request-timeout=1s")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("etcd (through the application's io.etcd.jetcd.Client bean) could not be "
                        + "reached at start-up")
                .satisfies((failure) -> {
                    assertThat(stackTrace(failure)).doesNotContain("127.0.0.1:2379");
                    EtcdUnreachableException unreachable = findCause(failure, EtcdUnreachableException.class);
                    FailureAnalysis analysis = new EtcdUnreachableFailureAnalyzer().analyze(failure, unreachable);
                    assertThat(analysis.getAction()).contains("where the application's etcd Client bean connects")
                        .doesNotContain("distributed-lock.etcd.endpoints");
                }));
    }

    @Test
    void closesTheRegistryOnShutdown() {
        this.contextRunner.run((context) -> {
            EtcdLockRegistry registry = context.getBean(EtcdLockRegistry.class);
            context.close();
            assertThatIllegalStateException().isThrownBy(() -> registry.obtain("after-close"));
        });
    }

    @Test
    void inMemoryStoreWarnsThatLocksAreLocal(CapturedOutput output) {
        this.contextRunner.withPropertyValues("distributed-lock.store=in-memory").run((context) -> {
            assertThat(context).hasSingleBean(InMemoryLockRegistry.class).doesNotHaveBean(Client.class);
            assertThat(output).contains("WARN")
                .contains("distributed-lock.store=in-memory: locks are local to this JVM");
        });
    }

    @Test
    void localHandoffPropertiesReachTheRegistry() {
        this.contextRunner.withPropertyValues("distributed-lock.store=in-memory")
            .run((context) -> assertThat(context.getBean(InMemoryLockRegistry.class).getLocalHandoff())
                .isEqualTo(LocalHandoff.DEFAULT));
        this.contextRunner
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.local-handoff.window=0",
                    "distributed-lock.local-handoff.linger=20ms")
            .run((context) -> assertThat(context.getBean(InMemoryLockRegistry.class).getLocalHandoff())
                .isEqualTo(new LocalHandoff(Duration.ZERO, Duration.ofMillis(20))));
        assertStartUpFails("distributed-lock.local-handoff.linger=-5ms",
                "distributed-lock.local-handoff.linger must not be negative, but is '-5ms'");
    }

    @Test
    void storeBindsLikeOtherEnumProperties() {
        this.contextRunner.withPropertyValues("distributed-lock.store=IN_MEMORY")
            .run((context) -> assertThat(context).hasSingleBean(InMemoryLockRegistry.class));
        this.contextRunner.withPropertyValues("distributed-lock.store=Etcd")
            .run((context) -> assertThat(context).hasSingleBean(EtcdLockRegistry.class));
    }

    @Test
    void withoutJetcdTheInMemoryStoreStillWorks() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(Client.class))
            .withPropertyValues("distributed-lock.store=in-memory")
            .withUserConfiguration(LockedService.class)
            .run((context) -> {
                assertThat(context).hasSingleBean(InMemoryLockRegistry.class).doesNotHaveBean(Client.class);
                assertThat(context.getBean(Locked.class).key()).isEqualTo("locked");
            });
    }

    @Test
    void withoutJetcdTheEtcdStoreBacksOffAndAnnotatedMethodsFailStartUp() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(Client.class)).run((context) -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class).doesNotHaveBean(Client.class);
        });
        this.contextRunner.withClassLoader(new FilteredClassLoader(Client.class))
            .withUserConfiguration(LockedService.class)
            .run((context) -> {
                assertThat(context).getFailure()
                    .hasMessageContaining("@DistributedLock is used (on " + Locked.class.getName() + ".key())")
                    .hasMessageContaining("there is no LockRegistry bean")
                    .hasMessageContaining("distributed-lock.store=in-memory");
                FailureAnalysis analysis = new NoLockRegistryFailureAnalyzer().analyze(context.getStartupFailure());
                assertThat(analysis).as("Spring Boot's failure analysis").isNotNull();
                assertThat(analysis.getDescription()).contains("there is no LockRegistry bean");
                assertThat(analysis.getAction()).contains("set distributed-lock.store=in-memory for a single instance");
            });
    }

    @Test
    void anInvalidAnnotationFailsStartUpWithAFailureAnalysisNotAStackTrace(CapturedOutput output) {
        SpringApplication application = new SpringApplication(DistributedLockOnly.class, BadTimeout.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatExceptionOfType(RuntimeException.class)
            .isThrownBy(() -> application.run("--distributed-lock.store=in-memory").close());
        assertThat(output).contains("APPLICATION FAILED TO START")
            .contains("Invalid @DistributedLock on " + BadTimeout.class.getName() + ".run(): waitTimeout 'ten seconds'")
            .contains("Action:")
            .contains("Correct the @DistributedLock annotation on " + BadTimeout.class.getName() + ".run()");
    }

    @Test
    void canBeSwitchedOff() {
        this.contextRunner.withPropertyValues("distributed-lock.enabled=false")
            .withUserConfiguration(LockedService.class)
            .run((context) -> {
                assertThat(context).doesNotHaveBean(LockRegistry.class)
                    .doesNotHaveBean(Client.class)
                    .doesNotHaveBean(DistributedLockAdvisor.class)
                    .doesNotHaveBean(DistributedLockProperties.class);
                assertThat(context.getBean(Locked.class).unlockedKey()).isEqualTo("no lock");
            });
    }

    @Test
    void unknownStoreFailsStartUp() {
        this.contextRunner.withPropertyValues("distributed-lock.store=mongodb")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.store")
                .hasStackTraceContaining("mongodb"));
    }

    @Test
    void anUnknownStoreFailsStartUpListingTheDocumentedValues(CapturedOutput output) {
        SpringApplication application = new SpringApplication(DistributedLockOnly.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatExceptionOfType(RuntimeException.class)
            .isThrownBy(() -> application.run("--distributed-lock.store=mongodb").close());
        assertThat(output).contains("APPLICATION FAILED TO START")
            .contains("Property: distributed-lock.store")
            .contains("Value: \"mongodb\"")
            .containsPattern("The following values are valid:\\s+etcd\\s+in-memory\\s+jdbc\\s+redis\\s+zookeeper")
            .doesNotContain("IN_MEMORY");
    }

    @Test
    void malformedEndpointsFailStartUp() {
        assertStartUpFails("distributed-lock.etcd.endpoints=htp://127.0.0.1:2379",
                "distributed-lock.etcd.endpoints contains 'htp://127.0.0.1:2379'", "scheme must be http or https");
        assertStartUpFails("distributed-lock.etcd.endpoints=localhost:2379",
                "distributed-lock.etcd.endpoints contains 'localhost:2379'", "scheme must be http or https");
        assertStartUpFails("distributed-lock.etcd.endpoints=http://etcd host:2379",
                "distributed-lock.etcd.endpoints contains 'http://etcd host:2379'", "Illegal character");
        assertStartUpFails("distributed-lock.etcd.endpoints=http://127.0.0.1:2379/v3/kv",
                "distributed-lock.etcd.endpoints contains 'http://127.0.0.1:2379/v3/kv'", "no path");
        assertStartUpFails("distributed-lock.etcd.endpoints=http://127.0.0.1:2379,https://127.0.0.1:2380",
                "distributed-lock.etcd.endpoints mixes http and https");
    }

    @Test
    void credentialsInAnEndpointAreRejectedWithoutBeingShown() {
        this.contextRunner.withPropertyValues("distributed-lock.etcd.endpoints=http://root:hunter2@127.0.0.1:2379")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("'http://***@127.0.0.1:2379'")
                .hasStackTraceContaining("credentials do not belong in the URL")
                .satisfies((failure) -> assertThat(stackTrace(failure)).doesNotContain("hunter2")));
    }

    @Test
    void badDurationsFailStartUp() {
        assertStartUpFails("distributed-lock.etcd.lease-ttl=500ms",
                "distributed-lock.etcd.lease-ttl must be a whole number of seconds, at least 1s, but is '500ms'");
        assertStartUpFails("distributed-lock.wait-timeout=-1s",
                "distributed-lock.wait-timeout must not be negative, but is '-1s'");
        assertStartUpFails("distributed-lock.etcd.request-timeout=0",
                "distributed-lock.etcd.request-timeout must be positive");
        // Drivers and gRPC's connect timeout hold these as int milliseconds.
        assertStartUpFails("distributed-lock.etcd.request-timeout=25d",
                "distributed-lock.etcd.request-timeout must be at most 24 days, but is '25d'");
        assertStartUpFails("distributed-lock.etcd.connect-timeout=30d",
                "distributed-lock.etcd.connect-timeout must be at most 24 days, but is '30d'");
        assertStartUpFails("distributed-lock.jdbc.request-timeout=25d",
                "distributed-lock.jdbc.request-timeout must be at most 24 days, but is '25d'");
        // gRPC would raise it to 10s without a word.
        assertStartUpFails("distributed-lock.etcd.keep-alive-time=5s",
                "distributed-lock.etcd.keep-alive-time must be at least 10s (gRPC's least keep-alive time), but is '5s'");
        this.contextRunner.withPropertyValues("distributed-lock.wait-timeout=soon")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.wait-timeout")
                .hasStackTraceContaining("soon"));
    }

    @Test
    void badRedisPropertiesFailStartUp() {
        assertStartUpFails("distributed-lock.redis.namespace=orders{eu}:",
                "distributed-lock.redis.namespace must not contain '{' or '}'", "'orders{eu}:'");
        assertStartUpFails("distributed-lock.redis.namespace=", "distributed-lock.redis.namespace must not be empty");
        assertStartUpFails("distributed-lock.redis.lease-ttl=100ms",
                "distributed-lock.redis.lease-ttl must be at least 300ms, but is '100ms'");
        assertStartUpFails("distributed-lock.redis.lease-ttl=1500100us",
                "distributed-lock.redis.lease-ttl must be a whole number of milliseconds");
        assertStartUpFails("distributed-lock.redis.request-timeout=0",
                "distributed-lock.redis.request-timeout must be positive, but is '0ms'");
    }

    @Test
    void namespaceWithoutTrailingSlashFailsStartUp() {
        assertStartUpFails("distributed-lock.etcd.namespace=/orders",
                "distributed-lock.etcd.namespace must end with '/'", "'/orders'");
    }

    @Test
    void credentialsMustComeTogetherAndThePasswordIsNeverShown() {
        this.contextRunner.withPropertyValues("distributed-lock.etcd.password=hunter2")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.etcd.username and distributed-lock.etcd.password must be "
                        + "set together, but only distributed-lock.etcd.password is set")
                .satisfies((failure) -> assertThat(stackTrace(failure)).doesNotContain("hunter2")));
    }

    @Test
    void badAnnotationFailsStartUpNamingTheMethod() {
        this.contextRunner.withPropertyValues("distributed-lock.store=in-memory")
            .withUserConfiguration(BadlyAnnotatedService.class)
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("Invalid @DistributedLock on " + BadlyAnnotated.class.getName() + ".run()")
                .hasStackTraceContaining("waitTimeout '${jobs.timeout}' cannot be resolved"));
    }

    private void assertStartUpFails(String property, String... messages) {
        this.contextRunner.withPropertyValues(property).run((context) -> {
            assertThat(context).hasFailed();
            for (String message : messages) {
                assertThat(context).getFailure().hasStackTraceContaining(message);
            }
        });
    }

    private static String stackTrace(Throwable failure) {
        StringWriter writer = new StringWriter();
        failure.printStackTrace(new PrintWriter(writer));
        return writer.toString();
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(DistributedLockAutoConfiguration.class)
    static class DistributedLockOnly {

    }

    static class BadTimeout {

        @DistributedLock(waitTimeout = "ten seconds")
        public void run() {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {

        final InMemoryLockRegistry registry = new InMemoryLockRegistry();

        @Bean
        LockRegistry myRegistry() {
            return this.registry;
        }

        @Bean
        Locked locked() {
            return new Locked();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClient {

        final Client client = Client.builder().endpoints("http://127.0.0.1:2379").build();

        @Bean(destroyMethod = "close")
        Client myClient() {
            return this.client;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UnreachableOwnClient {

        @Bean(destroyMethod = "close")
        Client myClient() {
            // Port 1: nothing listens there.
            return Client.builder().endpoints("http://127.0.0.1:1").build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LockedService {

        @Bean
        Locked locked() {
            return new Locked();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadlyAnnotatedService {

        @Bean
        BadlyAnnotated badlyAnnotated() {
            return new BadlyAnnotated();
        }
    }

    /** Public, so that a CGLIB subclass defined by a {@link FilteredClassLoader} can extend it. */
    public static class Locked {

        @DistributedLock(key = "'locked'")
        public String key() {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "'unlocked'")
        public String unlockedKey() {
            try {
                return LockContext.current().getKey();
            }
            catch (IllegalStateException ex) {
                return "no lock";
            }
        }
    }

    static class BadlyAnnotated {

        @DistributedLock(waitTimeout = "${jobs.timeout}")
        public void run() {
        }
    }

    private static <T extends Throwable> T findCause(Throwable failure, Class<T> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return type.cast(cause);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in " + failure);
    }
}
