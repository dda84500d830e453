package io.github.distlock.aop;

import java.lang.reflect.Modifier;
import java.util.function.Supplier;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ReflectionUtils;

/**
 * Fails start-up for a {@code @DistributedLock} method that a class-based (CGLIB) proxy cannot
 * intercept because it is {@code final}: the call would reach the bean without the lock, and
 * Spring only says so at DEBUG. An interface-based proxy intercepts such a method, so only the
 * beans that did get a class-based proxy are checked, once they have it.
 */
public final class ClassProxyCheck implements BeanPostProcessor {

    private final Supplier<LockOperationSource> operations;

    /**
     * Creates a check.
     * @param operations the source the advisor uses, looked up when the first proxied bean is checked
     */
    public ClassProxyCheck(Supplier<LockOperationSource> operations) {
        this.operations = operations;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!AopUtils.isCglibProxy(bean)) {
            return bean;
        }
        Class<?> targetClass = AopUtils.getTargetClass(bean);
        LockOperationSource source = this.operations.get();
        if (!source.hasOperations(targetClass)) {
            return bean;
        }
        ReflectionUtils.doWithMethods(targetClass, (method) -> {
            LockOperation operation = source.getOperation(method, targetClass);
            if (operation != null) {
                throw new InvalidLockOperationException(operation.description(), "the method is final, so the "
                        + "class-based proxy of bean '" + beanName + "' cannot intercept it and it would run without "
                        + "the lock; remove final, or have the bean proxied through an interface, or use "
                        + "distributed-lock.aop.mode=aspectj", "Remove final from the method, have the bean proxied "
                        + "through an interface, or use distributed-lock.aop.mode=aspectj.", null);
            }
        }, (method) -> Modifier.isFinal(method.getModifiers()) && !Modifier.isStatic(method.getModifiers())
                && !Modifier.isPrivate(method.getModifiers()));
        return bean;
    }
}
