package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnTimeout;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringUtils;

/**
 * Turns a {@link DistributedLock} on a method into a {@link LockOperation}, rejecting everything
 * that could only fail later: unparsable keys, malformed or negative wait timeouts, unresolvable
 * placeholders, methods a proxy cannot intercept, asynchronous return types, and
 * {@link OnTimeout#SKIP} on methods whose callers expect a value.
 */
final class LockOperationParser {

    private final SpelExpressionParser expressionParser = new SpelExpressionParser();

    private final PropertyResolver placeholders;

    private final Duration defaultWaitTimeout;

    LockOperationParser(PropertyResolver placeholders, Duration defaultWaitTimeout) {
        this.placeholders = placeholders;
        this.defaultWaitTimeout = defaultWaitTimeout;
    }

    LockOperation parse(Method method, DistributedLock annotation) {
        String description = describe(method);
        checkInterceptable(method, description);
        checkReturnType(method, annotation, description);
        Expression keyExpression = parseKey(annotation.key(), description);
        Duration waitTimeout = parseWaitTimeout(annotation.waitTimeout(), description);
        String methodKey = method.getDeclaringClass().getName() + "." + method.getName();
        return new LockOperation(method, description, keyExpression, methodKey, annotation.fair(), waitTimeout,
                annotation.onTimeout(), annotation.onLockLost());
    }

    private void checkInterceptable(Method method, String description) {
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers)) {
            throw invalid(description, "the method is " + (Modifier.isStatic(modifiers) ? "static" : "private")
                    + ", so no proxy can intercept it and it would run without the lock");
        }
    }

    private void checkReturnType(Method method, DistributedLock annotation, String description) {
        Class<?> returnType = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(returnType) || Future.class.isAssignableFrom(returnType)
                || Flow.Publisher.class.isAssignableFrom(returnType)
                || ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
            throw invalid(description, "it returns " + returnType.getName()
                    + ", and asynchronous or reactive methods are not supported yet: the lock would be released "
                    + "before the work completes. Lock inside the asynchronous work instead");
        }
        boolean skippable = returnType == void.class || returnType == Void.class || returnType == Optional.class;
        if (annotation.onTimeout() == OnTimeout.SKIP && !skippable) {
            throw invalid(description, "onTimeout = SKIP needs a method returning void, Void or Optional, but it returns "
                    + returnType.getName() + ", and callers would receive null");
        }
    }

    private @Nullable Expression parseKey(String key, String description) {
        if (!StringUtils.hasText(key)) {
            return null;
        }
        try {
            return this.expressionParser.parseExpression(key);
        }
        catch (ParseException ex) {
            throw invalid(description, "key '" + key + "' is not a valid SpEL expression: " + ex.getMessage()
                    + " (a constant key is a string literal, for example \"'nightly-report'\")", ex);
        }
    }

    private Duration parseWaitTimeout(String waitTimeout, String description) {
        if (waitTimeout.isEmpty()) {
            return this.defaultWaitTimeout;
        }
        String resolved;
        try {
            resolved = this.placeholders.resolveRequiredPlaceholders(waitTimeout).trim();
        }
        catch (IllegalArgumentException ex) {
            throw invalid(description, "waitTimeout '" + waitTimeout + "' cannot be resolved: " + ex.getMessage(), ex);
        }
        String shown = resolved.equals(waitTimeout) ? "'" + waitTimeout + "'"
                : "'" + waitTimeout + "' (resolved to '" + resolved + "')";
        Duration duration;
        try {
            duration = DurationStyle.detectAndParse(resolved);
        }
        catch (IllegalArgumentException ex) {
            throw invalid(description, "waitTimeout " + shown
                    + " is not a duration; use for example 500ms, 10s, 1m or PT10S", ex);
        }
        if (duration.isNegative()) {
            throw invalid(description, "waitTimeout " + shown + " is negative; use 0 to try once without waiting");
        }
        return duration;
    }

    private static String describe(Method method) {
        String parameters = Arrays.stream(method.getParameterTypes())
            .map(Class::getSimpleName)
            .collect(Collectors.joining(", "));
        return method.getDeclaringClass().getName() + "." + method.getName() + "(" + parameters + ")";
    }

    private static IllegalStateException invalid(String description, String problem) {
        return invalid(description, problem, null);
    }

    private static IllegalStateException invalid(String description, String problem, @Nullable Throwable cause) {
        return new IllegalStateException("Invalid @DistributedLock on " + description + ": " + problem, cause);
    }
}
