package io.github.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * The {@code #root} object of a {@code @DistributedLock} key expression.
 */
final class LockExpressionRoot {

    private final Method method;

    private final @Nullable Object target;

    private final Class<?> targetClass;

    private final @Nullable Object[] args;

    LockExpressionRoot(Method method, @Nullable Object target, Class<?> targetClass, @Nullable Object[] args) {
        this.method = method;
        this.target = target;
        this.targetClass = targetClass;
        this.args = args;
    }

    /** @return the annotated method ({@code #root.method}) */
    public Method getMethod() {
        return this.method;
    }

    /** @return the name of the annotated method ({@code #root.methodName}) */
    public String getMethodName() {
        return this.method.getName();
    }

    /** @return the bean the method is called on ({@code #root.target}), or {@code null} if unknown */
    public @Nullable Object getTarget() {
        return this.target;
    }

    /** @return the class of the bean ({@code #root.targetClass}) */
    public Class<?> getTargetClass() {
        return this.targetClass;
    }

    /** @return the call's arguments ({@code #root.args}) */
    public @Nullable Object[] getArgs() {
        return this.args;
    }
}
