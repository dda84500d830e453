package io.github.distlock.aop;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.SubmissionPublisher;

import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnLockLost;
import io.github.distlock.annotation.OnTimeout;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Finding, parsing and validating {@code @DistributedLock} once per method.
 */
class LockOperationSourceTests {

    private final MockEnvironment environment = new MockEnvironment().withProperty("jobs.wait", "250ms")
        .withProperty("jobs.bad-wait", "soon");

    private final LockOperationSource source = new LockOperationSource(this.environment, Duration.ofSeconds(30));

    @Test
    void parsesEveryAttribute() {
        LockOperation operation = operation(Valid.class, "everything", String.class);
        assertThat(operation.keyExpression().getExpressionString()).isEqualTo("'order:' + #id");
        assertThat(operation.fair()).isTrue();
        assertThat(operation.waitTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(operation.onTimeout()).isEqualTo(OnTimeout.SKIP);
        assertThat(operation.onLockLost()).isEqualTo(OnLockLost.WARN);
        assertThat(operation.description()).isEqualTo(Valid.class.getName() + ".everything(String)");
    }

    @Test
    void appliesDefaults() {
        LockOperation operation = operation(Valid.class, "defaults");
        assertThat(operation.keyExpression()).isNull();
        assertThat(operation.methodKey()).isEqualTo(Valid.class.getName() + ".defaults");
        assertThat(operation.fair()).isFalse();
        assertThat(operation.waitTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(operation.onTimeout()).isEqualTo(OnTimeout.FAIL);
        assertThat(operation.onLockLost()).isEqualTo(OnLockLost.FAIL);
    }

    @Test
    void acceptsEveryDurationStyleAndPlaceholders() {
        assertThat(operation(Valid.class, "bareNumber").waitTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(operation(Valid.class, "iso").waitTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(operation(Valid.class, "zero").waitTimeout()).isZero();
        assertThat(operation(Valid.class, "placeholder").waitTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(operation(Valid.class, "placeholderDefault").waitTimeout()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void parsesEachMethodOnce() {
        Method method = method(Valid.class, "everything", String.class);
        LockOperation first = this.source.getOperation(method, Valid.class);
        assertThat(this.source.hasOperations(Valid.class)).isTrue();
        assertThat(this.source.getOperation(method, Valid.class)).isSameAs(first);
        assertThat(this.source.getOperation(method, null)).isSameAs(first);
    }

    @Test
    void findsAnnotationsOnInterfaceMethodsThroughTheImplementation() {
        Method interfaceMethod = method(Service.class, "serve", String.class);
        LockOperation operation = this.source.getOperation(interfaceMethod, ServiceImpl.class);
        assertThat(operation).isNotNull();
        assertThat(operation.method().getDeclaringClass()).isEqualTo(ServiceImpl.class);
        assertThat(this.source.getOperation(method(ServiceImpl.class, "serve", String.class), ServiceImpl.class))
            .isSameAs(operation);
        assertThat(this.source.hasOperations(ServiceImpl.class)).isTrue();
    }

    @Test
    void findsAnnotationsOnOverriddenSuperclassMethods() {
        assertThat(this.source.hasOperations(SubJob.class)).isTrue();
        LockOperation operation = this.source.getOperation(method(SubJob.class, "run"), SubJob.class);
        assertThat(operation.methodKey()).isEqualTo(SubJob.class.getName() + ".run");
    }

    @Test
    void findsTheAnnotationInAComposedAnnotation() {
        assertThat(this.source.hasOperations(NightlyJobs.class)).isTrue();
        LockOperation operation = this.source.getOperation(method(NightlyJobs.class, "report"), NightlyJobs.class);
        assertThat(operation.keyExpression().getExpressionString()).isEqualTo("'nightly'");
        assertThat(operation.onTimeout()).isEqualTo(OnTimeout.SKIP);
    }

    @Test
    void ignoresClassesAndMethodsWithoutTheAnnotation() {
        assertThat(this.source.hasOperations(Plain.class)).isFalse();
        assertThat(this.source.getOperation(method(Valid.class, "notLocked"), Valid.class)).isNull();
    }

    @Test
    void rejectsUnparsableKey() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(BadKey.class))
            .withMessageContaining(BadKey.class.getName() + ".run(String)")
            .withMessageContaining("key '#id +'")
            .withMessageContaining("not a valid SpEL expression");
    }

    @Test
    void rejectsMalformedWaitTimeout() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(BadWait.class))
            .withMessageContaining(BadWait.class.getName() + ".run()")
            .withMessageContaining("waitTimeout '10 seconds' is not a duration");
    }

    @Test
    void rejectsNegativeWaitTimeout() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(NegativeWait.class))
            .withMessageContaining(NegativeWait.class.getName() + ".run()")
            .withMessageContaining("waitTimeout '-1s' is negative");
    }

    @Test
    void rejectsUnresolvablePlaceholder() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(MissingPlaceholder.class))
            .withMessageContaining(MissingPlaceholder.class.getName() + ".run()")
            .withMessageContaining("waitTimeout '${jobs.missing}' cannot be resolved");
    }

    @Test
    void rejectsPlaceholderResolvingToMalformedDuration() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(BadPlaceholderValue.class))
            .withMessageContaining(BadPlaceholderValue.class.getName() + ".run()")
            .withMessageContaining("waitTimeout '${jobs.bad-wait}' (resolved to 'soon') is not a duration");
    }

    @Test
    void validatesEveryAnnotatedMethodOfAClassAtOnce() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(OneBadAmongGood.class))
            .withMessageContaining(OneBadAmongGood.class.getName() + ".bad()");
    }

    @Test
    void rejectsABlankKey() {
        // Blank is neither an expression nor the empty "one lock per method": a typo, most likely.
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(BlankKey.class))
            .withMessageContaining(BlankKey.class.getName() + ".run()")
            .withMessageContaining("key ' ' is blank");
    }

    @Test
    void rejectsMethodsNoProxyCanIntercept() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(PrivateMethod.class))
            .withMessageContaining(PrivateMethod.class.getName() + ".run()")
            .withMessageContaining("the method is private");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(StaticMethod.class))
            .withMessageContaining(StaticMethod.class.getName() + ".run()")
            .withMessageContaining("the method is static");
    }

    @Test
    void rejectsAsynchronousReturnTypes() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(ReturnsCompletionStage.class))
            .withMessageContaining(ReturnsCompletionStage.class.getName() + ".run()")
            .withMessageContaining("returns java.util.concurrent.CompletionStage")
            .withMessageContaining("asynchronous or reactive methods are not supported");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(ReturnsCompletableFuture.class))
            .withMessageContaining("returns java.util.concurrent.CompletableFuture");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(ReturnsFuture.class))
            .withMessageContaining("returns java.util.concurrent.Future");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(ReturnsPublisher.class))
            .withMessageContaining("returns java.util.concurrent.Flow$Publisher");
    }

    @Test
    void rejectsSkipOnMethodsReturningAValue() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(SkipWithResult.class))
            .withMessageContaining(SkipWithResult.class.getName() + ".count()")
            .withMessageContaining("onTimeout = SKIP needs a method returning void, Void or Optional")
            .withMessageContaining("returns int");
    }

    @Test
    void skipReturnsNothingOrAnEmptyOptional() {
        assertThat(operation(Valid.class, "everything", String.class).skippedResult()).isNull();
        assertThat(operation(Valid.class, "optional").skippedResult()).isEqualTo(Optional.empty());
    }

    private LockOperation operation(Class<?> type, String name, Class<?>... parameterTypes) {
        LockOperation operation = this.source.getOperation(method(type, name, parameterTypes), type);
        assertThat(operation).isNotNull();
        return operation;
    }

    private static Method method(Class<?> type, String name, Class<?>... parameterTypes) {
        Method method = ReflectionUtils.findMethod(type, name, parameterTypes);
        assertThat(method).as(name).isNotNull();
        return method;
    }

    static class Valid {

        @DistributedLock(key = "'order:' + #id", fair = true, waitTimeout = "10s", onTimeout = OnTimeout.SKIP,
                onLockLost = OnLockLost.WARN)
        public void everything(String id) {
        }

        @DistributedLock
        public void defaults() {
        }

        @DistributedLock(waitTimeout = "1500")
        public void bareNumber() {
        }

        @DistributedLock(waitTimeout = "PT10S")
        public void iso() {
        }

        @DistributedLock(waitTimeout = "0")
        public void zero() {
        }

        @DistributedLock(waitTimeout = "${jobs.wait}")
        public void placeholder() {
        }

        @DistributedLock(waitTimeout = "${jobs.unset:1m}")
        public void placeholderDefault() {
        }

        @DistributedLock(onTimeout = OnTimeout.SKIP)
        public Optional<String> optional() {
            return Optional.of("ran");
        }

        public void notLocked() {
        }
    }

    interface Service {

        @DistributedLock(key = "#name")
        void serve(String name);
    }

    static class ServiceImpl implements Service {

        @Override
        public void serve(String name) {
        }
    }

    static class BaseJob {

        @DistributedLock
        public void run() {
        }
    }

    static class SubJob extends BaseJob {

        @Override
        public void run() {
        }
    }

    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @DistributedLock(key = "'nightly'", onTimeout = OnTimeout.SKIP)
    @interface NightlyJob {

    }

    static class NightlyJobs {

        @NightlyJob
        void report() {
        }

    }

    static class Plain {

        public void run() {
        }
    }

    static class BadKey {

        @DistributedLock(key = "#id +")
        public void run(String id) {
        }
    }

    static class BadWait {

        @DistributedLock(waitTimeout = "10 seconds")
        public void run() {
        }
    }

    static class NegativeWait {

        @DistributedLock(waitTimeout = "-1s")
        public void run() {
        }
    }

    static class MissingPlaceholder {

        @DistributedLock(waitTimeout = "${jobs.missing}")
        public void run() {
        }
    }

    static class BadPlaceholderValue {

        @DistributedLock(waitTimeout = "${jobs.bad-wait}")
        public void run() {
        }
    }

    static class OneBadAmongGood {

        @DistributedLock
        public void good() {
        }

        @DistributedLock(waitTimeout = "later")
        public void bad() {
        }
    }

    static class BlankKey {

        @DistributedLock(key = " ")
        public void run() {
        }
    }

    static class PrivateMethod {

        @DistributedLock
        private void run() {
        }
    }

    static class StaticMethod {

        @DistributedLock
        public static void run() {
        }
    }

    static class ReturnsCompletionStage {

        @DistributedLock
        public CompletionStage<String> run() {
            return CompletableFuture.completedFuture("done");
        }
    }

    static class ReturnsCompletableFuture {

        @DistributedLock
        public CompletableFuture<String> run() {
            return CompletableFuture.completedFuture("done");
        }
    }

    static class ReturnsFuture {

        @DistributedLock
        public Future<String> run() {
            return CompletableFuture.completedFuture("done");
        }
    }

    static class ReturnsPublisher {

        @DistributedLock
        public Flow.Publisher<String> run() {
            return new SubmissionPublisher<>();
        }
    }

    static class SkipWithResult {

        @DistributedLock(onTimeout = OnTimeout.SKIP)
        public int count() {
            return 1;
        }
    }
}
