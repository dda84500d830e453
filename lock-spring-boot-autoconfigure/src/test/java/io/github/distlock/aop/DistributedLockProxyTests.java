package io.github.distlock.aop;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock} through JDK and CGLIB proxies, on interface and class methods, with and
 * without Spring Boot's AOP auto-configuration.
 */
class DistributedLockProxyTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DistributedLockAutoConfiguration.class))
        .withUserConfiguration(Services.class)
        .withPropertyValues("distributed-lock.store=in-memory");

    @Test
    void classProxiesByDefault() {
        this.contextRunner.run((context) -> {
            assertThat(AopUtils.isCglibProxy(context.getBean(Greeter.class))).isTrue();
            assertThat(AopUtils.isCglibProxy(context.getBean(ImplementationAnnotated.class))).isTrue();
            assertLocked(context);
        });
    }

    @Test
    void interfaceProxiesWhenProxyTargetClassIsFalse() {
        this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false").run((context) -> {
            assertThat(AopUtils.isJdkDynamicProxy(context.getBean(Greeter.class))).isTrue();
            assertThat(AopUtils.isJdkDynamicProxy(context.getBean(ImplementationAnnotatedApi.class))).isTrue();
            assertThat(AopUtils.isCglibProxy(context.getBean(NoInterface.class))).isTrue();
            assertLocked(context);
        });
    }

    @Test
    void appliesWithoutSpringBootsAopAutoConfiguration() {
        this.contextRunner.withPropertyValues("spring.aop.auto=false").run((context) -> {
            assertThat(AopUtils.isAopProxy(context.getBean(Greeter.class))).isTrue();
            assertLocked(context);
        });
    }

    @Test
    void leavesBeansWithoutTheAnnotationAlone() {
        this.contextRunner.run((context) -> assertThat(AopUtils.isAopProxy(context.getBean(Unlocked.class)))
            .isFalse());
    }

    @Test
    void aFinalMethodFailsStartUpWhenAClassProxyWouldSkipIt() {
        this.contextRunner.withBean(FinalMethod.class).run((context) -> assertThat(context).getFailure()
            .hasStackTraceContaining("Invalid @DistributedLock on " + FinalMethod.class.getName() + ".run(String)")
            .hasStackTraceContaining("the method is final"));
    }

    @Test
    void aFinalMethodBehindAnInterfaceProxyIsLocked() {
        this.contextRunner.withPropertyValues("spring.aop.proxy-target-class=false")
            .withBean(FinalImplementation.class)
            .run((context) -> assertThat(context.getBean(FinalApi.class).run("z")).isEqualTo("final:z"));
    }

    private static void assertLocked(AssertableApplicationContext context) {
        assertThat(context.getBean(Greeter.class).greet("ada")).isEqualTo("greet:ada");
        assertThat(context.getBean(ImplementationAnnotatedApi.class).run("x")).isEqualTo("impl:x");
        assertThat(context.getBean(NoInterface.class).run("y")).isEqualTo("plain:y");
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {

        @Bean
        GreeterImpl greeter() {
            return new GreeterImpl();
        }

        @Bean
        ImplementationAnnotated implementationAnnotated() {
            return new ImplementationAnnotated();
        }

        @Bean
        NoInterface noInterface() {
            return new NoInterface();
        }

        @Bean
        Unlocked unlocked() {
            return new Unlocked();
        }
    }

    /** Annotated on the interface method. */
    interface Greeter {

        @DistributedLock(key = "'greet:' + #name")
        String greet(String name);
    }

    static class GreeterImpl implements Greeter {

        @Override
        public String greet(String name) {
            return LockContext.current().getKey();
        }
    }

    interface ImplementationAnnotatedApi {

        String run(String id);
    }

    /** Annotated on the implementation of a plain interface method. */
    static class ImplementationAnnotated implements ImplementationAnnotatedApi {

        @Override
        @DistributedLock(key = "'impl:' + #id")
        public String run(String id) {
            return LockContext.current().getKey();
        }
    }

    static class NoInterface {

        @DistributedLock(key = "'plain:' + #id")
        public String run(String id) {
            return LockContext.current().getKey();
        }
    }

    static class Unlocked {

        public String run() {
            return "free";
        }
    }

    /** A class proxy cannot override a final method: the call would reach the target unlocked. */
    static class FinalMethod {

        @DistributedLock(key = "'final:' + #id")
        public final String run(String id) {
            return LockContext.current().getKey();
        }
    }

    interface FinalApi {

        String run(String id);
    }

    /** Through an interface proxy, a final implementation method is intercepted all the same. */
    static class FinalImplementation implements FinalApi {

        @Override
        @DistributedLock(key = "'final:' + #id")
        public final String run(String id) {
            return LockContext.current().getKey();
        }
    }
}
