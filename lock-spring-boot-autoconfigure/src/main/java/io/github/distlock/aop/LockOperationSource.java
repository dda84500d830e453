package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.github.distlock.annotation.DistributedLock;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.PropertyResolver;
import org.springframework.util.Assert;

/**
 * Finds {@link DistributedLock} on methods and caches the parsed {@link LockOperation} of each.
 *
 * <p>The annotation is looked up on the most specific method of the target class, including the
 * interface and superclass methods it overrides. {@link #hasOperations(Class)} parses and validates
 * every annotated method of a class at once, so that a bad annotation fails when the bean is
 * proxied at start-up rather than at its first call.
 */
public final class LockOperationSource {

    private final LockOperationParser parser;

    private final Map<Class<?>, Boolean> classes = new ConcurrentHashMap<>();

    private final Map<Method, Optional<LockOperation>> bySpecificMethod = new ConcurrentHashMap<>();

    private final Map<MethodClassKey, Optional<LockOperation>> byInvokedMethod = new ConcurrentHashMap<>();

    private volatile @Nullable String firstAnnotatedMethod;

    /**
     * Creates a source.
     * @param placeholders resolves {@code ${...}} placeholders in {@code waitTimeout}
     * @param defaultWaitTimeout wait used when an annotation names none
     */
    public LockOperationSource(PropertyResolver placeholders, Duration defaultWaitTimeout) {
        Assert.notNull(placeholders, "placeholders must not be null");
        Assert.isTrue(defaultWaitTimeout != null && !defaultWaitTimeout.isNegative(),
                "defaultWaitTimeout must not be null or negative");
        this.parser = new LockOperationParser(placeholders, defaultWaitTimeout);
    }

    /**
     * Returns whether any method of {@code targetClass} is annotated, parsing and validating every
     * annotated method of the class on the first call for that class.
     * @param targetClass a bean class
     * @return whether the class has at least one {@code @DistributedLock} method
     * @throws IllegalStateException if an annotation is invalid, naming the method and the bad value
     */
    public boolean hasOperations(Class<?> targetClass) {
        return this.classes.computeIfAbsent(targetClass, this::introspect);
    }

    private boolean introspect(Class<?> targetClass) {
        Map<Method, LockOperation> operations = MethodIntrospector.selectMethods(targetClass,
                (MethodIntrospector.MetadataLookup<LockOperation>) this::operationOf);
        if (!operations.isEmpty() && this.firstAnnotatedMethod == null) {
            this.firstAnnotatedMethod = operations.values().iterator().next().description();
        }
        return !operations.isEmpty();
    }

    /**
     * Returns the description of one annotated method found so far, for messages.
     * @return a method, or {@code null} if no annotated method was found
     */
    @Nullable String firstAnnotatedMethod() {
        return this.firstAnnotatedMethod;
    }

    /**
     * Returns the operation for a call of {@code method} on an instance of {@code targetClass}.
     * @param method the invoked method (possibly an interface method)
     * @param targetClass the target's class, or {@code null} if unknown
     * @return the operation, or {@code null} if the method is not annotated
     */
    @Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
        return this.byInvokedMethod
            .computeIfAbsent(new MethodClassKey(method, targetClass),
                    (key) -> Optional.ofNullable(operationOf(AopUtils.getMostSpecificMethod(method, targetClass))))
            .orElse(null);
    }

    private @Nullable LockOperation operationOf(Method specificMethod) {
        return this.bySpecificMethod.computeIfAbsent(specificMethod, this::parse).orElse(null);
    }

    private Optional<LockOperation> parse(Method specificMethod) {
        DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specificMethod, DistributedLock.class);
        return (annotation != null) ? Optional.of(this.parser.parse(specificMethod, annotation)) : Optional.empty();
    }
}
