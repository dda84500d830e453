package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.Arrays;

import io.github.distlock.aop.LockOperation.KeyPart;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.ExpressionState;

/**
 * Evaluates the key of a {@code @DistributedLock} call from its already parsed expression.
 */
final class LockKeyResolver {

    /**
     * Whether a class's {@code toString()} is its own (or a superclass's other than Object's): an
     * array or a class that keeps Object's prints its identity hash, which is no key.
     */
    private static final ClassValue<Boolean> HAS_OWN_TEXT = new ClassValue<>() {

        @Override
        protected Boolean computeValue(Class<?> type) {
            if (type.isArray()) {
                return false;
            }
            try {
                return type.getMethod("toString").getDeclaringClass() != Object.class;
            }
            catch (NoSuchMethodException ex) {
                return true;
            }
        }
    };

    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

    private final @Nullable BeanFactoryResolver beanResolver;

    LockKeyResolver(@Nullable BeanFactory beanFactory) {
        this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
    }

    /**
     * Returns the lock key of one call.
     * @param operation the method's operation
     * @param target the bean called, or {@code null} if unknown
     * @param targetClass the bean's class
     * @param args the call's arguments
     * @return the key, never empty
     * @throws IllegalArgumentException if the expression throws, or yields {@code null}, an empty
     * string, or a value whose text is its identity (an array, an object without its own
     * {@code toString()}), or if a read it concatenates is {@code null} or an empty string
     */
    String resolve(LockOperation operation, @Nullable Object target, Class<?> targetClass, @Nullable Object[] args) {
        Expression expression = operation.keyExpression();
        if (expression == null) {
            return operation.methodKey();
        }
        Method method = operation.method();
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
                new LockExpressionRoot(method, target, targetClass, args), method, args, this.parameterNames);
        if (this.beanResolver != null) {
            context.setBeanResolver(this.beanResolver);
        }
        Object value;
        try {
            value = expression.getValue(context);
        }
        catch (RuntimeException ex) {
            throw badKey(operation, expression, " could not be evaluated: " + ex.getMessage(), ex);
        }
        if (value != null && !HAS_OWN_TEXT.get(value.getClass())) {
            throw badKey(operation, expression, " evaluated to " + describe(value.getClass())
                    + ", whose text names the instance (Object.toString()): every call or every instance would "
                    + "lock a key of its own; use a value or property of it, e.g. #root.args[0]", null);
        }
        String key = (value != null) ? value.toString() : null;
        if (key == null || key.isEmpty()) {
            throw badKey(operation, expression, " evaluated to " + ((key == null) ? "null" : "an empty string")
                    + parameterNameHint(method), null);
        }
        checkConcatenatedReads(operation, context, expression, key);
        return key;
    }

    /** See {@code LockOperationParser.collectConcatenatedReads}: a missing part would give every such call one key. */
    private static void checkConcatenatedReads(LockOperation operation, MethodBasedEvaluationContext context,
            Expression expression, String key) {
        if (operation.keyParts().isEmpty()) {
            return;
        }
        ExpressionState state = new ExpressionState(context);
        for (KeyPart part : operation.keyParts()) {
            Object value;
            try {
                value = part.node().getValue(state);
            }
            catch (RuntimeException ex) {
                throw badKey(operation, expression, " could not be evaluated: " + part.text() + " failed: "
                        + ex.getMessage(), ex);
            }
            if (value == null || "".equals(value)) {
                String missing = (value == null) ? "null" : "an empty string";
                throw badKey(operation, expression, ": " + part.text() + " is " + missing + ", so the key is '" + key
                        + "', which calls without it share; pass a value, or write (" + part.text()
                        + " ?: 'none') if such calls should share their lock", null);
            }
        }
    }

    /** @return the failure of a call whose key {@code expression} has {@code problem}, naming the key and the method */
    private static IllegalArgumentException badKey(LockOperation operation, Expression expression, String problem,
            @Nullable Throwable cause) {
        return new IllegalArgumentException("Lock key '" + expression.getExpressionString() + "' of "
                + operation.description() + problem, cause);
    }

    private static String describe(Class<?> type) {
        String name = type.getSimpleName();
        return (name.isEmpty() ? "an instance of " + type.getName()
                : ("AEIOU".indexOf(name.charAt(0)) >= 0 ? "an " : "a ") + name);
    }

    private static String parameterNameHint(Method method) {
        Parameter[] parameters = method.getParameters();
        boolean namesMissing = Arrays.stream(parameters).anyMatch((parameter) -> !parameter.isNamePresent());
        return namesMissing ? " (parameter names are not available: compile with -parameters, or use #p0, #p1, ...)"
                : "";
    }
}
