package io.github.distlock.aspectj;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;

import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.JvmProcess;
import org.aspectj.weaver.loadtime.Agent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code distributed-lock.aop.mode}: proxy mode, the default, locks calls through the bean's proxy
 * only; aspectj mode locks a bean's calls on itself too, with the aspect woven at load time by the
 * AspectJ agent and the test {@code META-INF/aop.xml} (limited to this package).
 */
@ExtendWith(OutputCaptureExtension.class)
class AspectJModeTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=in-memory")
        .withUserConfiguration(OrdersConfiguration.class);

    @Test
    void aspectjModeLocksSelfInvocationsOfWovenBeans() throws Exception {
        try (JvmProcess app = JvmProcess.builder(SelfInvocationApplication.class)
            .jvmArgs("-javaagent:" + weaverJar())
            .args("aspectj")
            .start()) {
            assertThat(app.awaitLine((line) -> line.startsWith("BEFORE_CONTEXT "), TIMEOUT))
                .startsWith("BEFORE_CONTEXT IllegalStateException: ")
                .contains("SelfInvocationApplication.Orders.ship(int)", "distributed-lock.aop.mode=aspectj");
            assertThat(app.awaitLine((line) -> line.startsWith("PROXIED "), TIMEOUT)).isEqualTo("PROXIED false");
            assertThat(app.awaitLine((line) -> line.startsWith("SELF "), TIMEOUT)).matches("SELF held fence=\\d+");
            assertThat(app.awaitLine((line) -> line.startsWith("EXTERNAL "), TIMEOUT))
                .matches("EXTERNAL held fence=\\d+");
            assertThat(app.awaitLine((line) -> line.startsWith("AFTER "), TIMEOUT)).isEqualTo("AFTER false");
            assertThat(app.waitFor(TIMEOUT)).as(app.stderrTail()).isZero();
            // Woven, so the check that warns of unwoven methods says nothing.
            assertThat(String.join("\n", app.lines()) + app.stderrTail()).doesNotContain("are not woven");
        }
    }

    @Test
    void proxyModeLocksCallsThroughTheProxyOnly() throws Exception {
        try (JvmProcess app = JvmProcess.start(SelfInvocationApplication.class, "proxy")) {
            assertThat(app.awaitLine((line) -> line.startsWith("PROXIED "), TIMEOUT)).isEqualTo("PROXIED true");
            assertThat(app.awaitLine((line) -> line.startsWith("SELF "), TIMEOUT)).isEqualTo("SELF not-held");
            assertThat(app.awaitLine((line) -> line.startsWith("EXTERNAL "), TIMEOUT))
                .matches("EXTERNAL held fence=\\d+");
            assertThat(app.awaitLine((line) -> line.startsWith("AFTER "), TIMEOUT)).isEqualTo("AFTER false");
            assertThat(app.waitFor(TIMEOUT)).as(app.stderrTail()).isZero();
        }
    }

    @Test
    void proxyModeIsTheDefault() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(DistributedLockAdvisor.class)
                .hasSingleBean(DistributedLockInterceptor.class);
            assertThat(AopUtils.isAopProxy(context.getBean(SelfInvocationApplication.Orders.class))).isTrue();
        });
    }

    @Test
    void aspectjModeRegistersNoAdvisorAndCreatesNoProxies() {
        // Without annotated beans: this JVM weaves nothing (the woven case is the test above, in a JVM of its own).
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.aop.mode=aspectj")
            .withBean(Plain.class)
            .run((context) -> {
                assertThat(context).hasNotFailed()
                    .doesNotHaveBean(DistributedLockAdvisor.class)
                    .hasSingleBean(DistributedLockInterceptor.class);
                assertThat(AopUtils.isAopProxy(context.getBean(Plain.class))).isFalse();
            });
    }

    @Test
    void aspectjModeWarnsOfAnAnnotatedMethodTheWeaverDidNotWeave(CapturedOutput output) {
        // This JVM runs without the AspectJ agent: the bean's class is not woven, its method runs unlocked.
        this.contextRunner.withPropertyValues("distributed-lock.aop.mode=aspectj").run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(SelfInvocationApplication.Orders.class).ship(7)).isEqualTo("not-held");
        });
        assertThat(output).containsOnlyOnce("these @DistributedLock methods of bean 'orders' are not woven with "
                + "io.github.distlock.aop.DistributedLockAspect and run without their lock: "
                + "io.github.distlock.aspectj.SelfInvocationApplication$Orders.ship(int) (its class is not woven");
    }

    @Test
    void aspectjModeWarnsOfAnAnnotationThePointcutCannotMatch(CapturedOutput output) {
        // The proxy mode honours an annotation on the interface method; the aspect's execution pointcut does not.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.aop.mode=aspectj")
            .withBean(Shipping.class, ShippingService::new)
            .run((context) -> assertThat(context).hasNotFailed());
        assertThat(output).contains("ShippingService.ship(int) (the aspect matches only methods that carry "
                + "@DistributedLock themselves");
    }

    @Test
    void aspectjModeChecksAnnotationsAtStartUp() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.aop.mode=aspectj")
            .withUserConfiguration(BadKeyConfiguration.class)
            .run((context) -> assertThat(context).hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("BadKey.work"));
    }

    @Test
    void anUnknownModeFailsStartUp() {
        this.contextRunner.withPropertyValues("distributed-lock.aop.mode=weaving")
            .run((context) -> assertThat(context).hasFailed()
                .getFailure()
                .hasStackTraceContaining("distributed-lock.aop.mode"));
    }

    private static Path weaverJar() throws URISyntaxException {
        return Path.of(Agent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    @Configuration(proxyBeanMethods = false)
    static class OrdersConfiguration {

        @Bean
        SelfInvocationApplication.Orders orders(LockRegistry registry) {
            return new SelfInvocationApplication.Orders(registry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadKeyConfiguration {

        @Bean
        BadKey badKey() {
            return new BadKey();
        }
    }

    static class Plain {

        public void work() {
        }
    }

    interface Shipping {

        @DistributedLock(key = "'shipment:' + #shipmentId")
        void ship(int shipmentId);
    }

    static class ShippingService implements Shipping {

        @Override
        public void ship(int shipmentId) {
        }
    }

    static class BadKey {

        @DistributedLock(key = "#orderID")
        public void work(int orderId) {
        }
    }
}
