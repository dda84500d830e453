package io.github.distlock.autoconfigure;

import java.util.List;
import java.util.function.Supplier;

import io.github.distlock.annotation.DistributedLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * In proxy mode, a {@code @DistributedLock} method that its own class calls (which then runs
 * without the lock) is named at start-up with its callers and the cure; a class that calls its
 * annotated methods only through the bean is not, and neither is anything in aspectj mode.
 */
@ExtendWith(OutputCaptureExtension.class)
class SelfInvocationReportTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=in-memory");

    @Test
    void aSelfInvokedMethodIsNamedOnceWithItsCallersAndTheCure(CapturedOutput output) {
        this.contextRunner.withBean(Reports.class).withBean(Orders.class, Orders::new).run((context) -> {
            assertThat(context).hasNotFailed();
            List<String> warnings = warnings(output);
            assertThat(warnings).as("self-invocation warnings").hasSize(1);
            assertThat(warnings.get(0)).contains("WARN")
                .contains("@DistributedLock method " + Reports.class.getName() + ".rebuild(String) is called by its own "
                        + "class (rebuildAll, rebuildEither, rebuildLater)")
                .contains("does not go through the proxy and may run without the lock")
                .endsWith("Call it through the bean (inject it), or use distributed-lock.aop.mode=aspectj");
        });
    }

    @Test
    void inheritedCallersCountAndCallsThroughTheBeanDoNot(CapturedOutput output) {
        this.contextRunner.withBean(NightlyReports.class).run((context) -> {
            assertThat(warnings(output)).singleElement()
                .satisfies((warning) -> assertThat(warning).contains(NightlyReports.class.getName() + ".rebuild(String)")
                    .contains("(nightly, rebuildAll, rebuildEither, rebuildLater)"));
        });
        assertThat(SelfInvocationReport.selfCalls(Orders.class, List.of(method(Orders.class, "ship", long.class))))
            .isEmpty();
    }

    @Test
    void bridgeMethodsAndReceiversThatMayNotBeThisAreNotNamed() {
        assertThat(SelfInvocationReport.selfCalls(Listener.class, List.of(method(Listener.class, "accept", String.class))))
            .as("the bridge accept(Object) of Consumer<String>")
            .isEmpty();
        assertThat(SelfInvocationReport.selfCalls(Orders.class, List.of(method(Orders.class, "ship", long.class))))
            .as("(self != null ? self : this).ship(id): this on one path only")
            .isEmpty();
    }

    @Test
    void nothingInAspectjMode(CapturedOutput output) {
        this.contextRunner.withPropertyValues("distributed-lock.aop.mode=aspectj")
            .withBean(Reports.class)
            .run((context) -> assertThat(warnings(output)).isEmpty());
    }

    private static List<String> warnings(CapturedOutput output) {
        return output.getAll().lines().filter((line) -> line.contains("is called by its own class")).toList();
    }

    private static java.lang.reflect.Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getDeclaredMethod(name, parameters);
        }
        catch (NoSuchMethodException ex) {
            throw new IllegalStateException(ex);
        }
    }

    static class Reports {

        @DistributedLock(key = "#name")
        public String rebuild(String name) {
            return name;
        }

        public void rebuildAll() {
            rebuild("a");
            rebuild("b");
        }

        public Supplier<String> rebuildLater() {
            return () -> rebuild("later");
        }

        public String rebuildEither(boolean first, long attempts) {
            try {
                return rebuild((first ? "first" : "second") + attempts * 2L);
            }
            catch (IllegalStateException ex) {
                return ex.getMessage();
            }
        }

        /** On another instance: not a self-invocation. */
        public String rebuildFor(Reports other) {
            return other.rebuild("other");
        }
    }

    static class NightlyReports extends Reports {

        public void nightly() {
            rebuild("nightly");
        }
    }

    /** Calls its annotated method only through another bean's reference, as the cure says. */
    static class Orders {

        private Orders self;

        void setSelf(Orders self) {
            this.self = self;
        }

        @DistributedLock(key = "#id")
        public long ship(long id) {
            return id;
        }

        public long shipTwice(long id) {
            return this.self.ship(id) + this.self.ship(id);
        }

        public long shipThroughWhicheverIsSet(long id) {
            return ((this.self != null) ? this.self : this).ship(id);
        }
    }

    /** Its annotated method implements a generic interface's: javac adds a bridge that calls it on this. */
    static class Listener implements java.util.function.Consumer<String> {

        @Override
        @DistributedLock(key = "#value")
        public void accept(String value) {
        }
    }
}
