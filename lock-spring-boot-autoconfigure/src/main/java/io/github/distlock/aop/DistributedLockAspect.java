package io.github.distlock.aop;

import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInvocation;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;
import org.jspecify.annotations.Nullable;
import org.springframework.util.Assert;

/**
 * Applies {@link io.github.distlock.annotation.DistributedLock @DistributedLock} through AspectJ
 * weaving, for {@code distributed-lock.aop.mode=aspectj}: every execution of an annotated method
 * in a woven class is locked, including calls a bean makes on itself, which a Spring AOP proxy
 * never sees.
 *
 * <p>The weaver (load-time weaving with the AspectJ agent and a {@code META-INF/aop.xml} naming
 * this aspect, or compile-time weaving) creates the aspect instance, not Spring. The
 * auto-configuration hands it the same {@link DistributedLockInterceptor} that the proxy mode
 * uses, through {@link #configure}, so key expressions, fairness, wait timeouts, timeout and
 * loss handling and metrics behave identically. A woven method that runs while no interceptor
 * is configured (before the application context has started, after it closed, or in proxy mode)
 * fails with an {@link IllegalStateException} rather than run unlocked.
 *
 * <p>The pointcut matches methods that carry the annotation themselves: unlike the proxy mode,
 * an annotation on an interface method or a composed annotation does not make the implementing
 * method match. One interceptor serves the JVM: the most recently started application context
 * in aspectj mode.
 */
@Aspect
public class DistributedLockAspect {

    private static volatile @Nullable DistributedLockInterceptor interceptor;

    /**
     * Sets the interceptor that woven {@code @DistributedLock} methods run through.
     * @param lockInterceptor the interceptor of the application context in aspectj mode
     */
    public static void configure(DistributedLockInterceptor lockInterceptor) {
        Assert.notNull(lockInterceptor, "lockInterceptor must not be null");
        interceptor = lockInterceptor;
    }

    /**
     * Removes {@code lockInterceptor} if it is the configured one, when its context closes.
     * @param lockInterceptor the interceptor set by {@link #configure}
     */
    public static void release(DistributedLockInterceptor lockInterceptor) {
        if (interceptor == lockInterceptor) {
            interceptor = null;
        }
    }

    /**
     * Runs an annotated method while holding its lock.
     * @param call the execution of the annotated method
     * @return what the method returned, or what the operation's timeout handling returns
     * @throws Throwable what the method or the lock threw
     */
    @Around("execution(@io.github.distlock.annotation.DistributedLock * *(..))")
    public @Nullable Object lock(ProceedingJoinPoint call) throws Throwable {
        DistributedLockInterceptor configured = interceptor;
        if (configured == null) {
            throw new IllegalStateException(call.getSignature().toLongString() + " is woven with "
                    + DistributedLockAspect.class.getName() + " but no application context in "
                    + "distributed-lock.aop.mode=aspectj has configured it: the method ran before the context "
                    + "started or after it closed, or the context runs in proxy mode (set "
                    + "distributed-lock.aop.mode=aspectj, or stop weaving this aspect)");
        }
        return configured.invoke(new JoinPointInvocation(call));
    }

    /** The join point as the {@link MethodInvocation} the interceptor takes. */
    private static final class JoinPointInvocation implements MethodInvocation {

        private final ProceedingJoinPoint call;

        private final Method method;

        JoinPointInvocation(ProceedingJoinPoint call) {
            this.call = call;
            this.method = ((MethodSignature) call.getSignature()).getMethod();
        }

        @Override
        public Method getMethod() {
            return this.method;
        }

        @Override
        public Object[] getArguments() {
            return this.call.getArgs();
        }

        @Override
        public @Nullable Object proceed() throws Throwable {
            return this.call.proceed();
        }

        @Override
        public @Nullable Object getThis() {
            return this.call.getThis();
        }

        @Override
        public AccessibleObject getStaticPart() {
            return this.method;
        }
    }
}
