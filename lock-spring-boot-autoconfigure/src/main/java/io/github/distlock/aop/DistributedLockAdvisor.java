package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.aopalliance.aop.Advice;
import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.util.Assert;

/**
 * Applies the {@link DistributedLockInterceptor} to beans with
 * {@link io.github.distlock.annotation.DistributedLock @DistributedLock} methods.
 *
 * <p>Its {@linkplain #getOrder() order} decides how the lock nests with other advice on the same
 * method. The {@linkplain #DEFAULT_ORDER default} takes precedence over Spring's transaction
 * advice (which defaults to {@link Ordered#LOWEST_PRECEDENCE}), so the lock is acquired before a
 * {@code @Transactional} transaction begins and released after it completes.
 *
 * <p>Checking whether a bean needs the advice validates every annotation of the bean's class, so
 * a bad annotation fails the application when the bean is created. Once all singletons exist, the
 * advisor fails start-up if annotated methods were found but no
 * {@link io.github.distlock.LockRegistry} exists.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor implements SmartInitializingSingleton {

    /** Default order: just ahead of transaction advice at {@link Ordered#LOWEST_PRECEDENCE}. */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private static final long serialVersionUID = 1L;

    private final DistributedLockInterceptor interceptor;

    private final Pointcut pointcut;

    /**
     * Creates an advisor with the {@linkplain #DEFAULT_ORDER default order}.
     * @param operations the source the interceptor uses
     * @param interceptor the interceptor to apply
     */
    public DistributedLockAdvisor(LockOperationSource operations, DistributedLockInterceptor interceptor) {
        Assert.notNull(operations, "operations must not be null");
        Assert.notNull(interceptor, "interceptor must not be null");
        this.interceptor = interceptor;
        this.pointcut = new LockOperationPointcut(operations);
        setOrder(DEFAULT_ORDER);
    }

    @Override
    public Pointcut getPointcut() {
        return this.pointcut;
    }

    @Override
    public Advice getAdvice() {
        return this.interceptor;
    }

    @Override
    public void afterSingletonsInstantiated() {
        this.interceptor.verifyRegistry();
    }

    private static final class LockOperationPointcut extends StaticMethodMatcherPointcut {

        private final LockOperationSource operations;

        LockOperationPointcut(LockOperationSource operations) {
            this.operations = operations;
            setClassFilter(new LockOperationClassFilter(operations));
        }

        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return this.operations.getOperation(method, targetClass) != null;
        }
    }

    private record LockOperationClassFilter(LockOperationSource operations) implements ClassFilter {

        @Override
        public boolean matches(Class<?> clazz) {
            return this.operations.hasOperations(clazz);
        }
    }
}
