package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.Arrays;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;

/**
 * Evaluates the key of a {@code @DistributedLock} call from its already parsed expression.
 */
final class LockKeyResolver {

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
     * @throws IllegalArgumentException if the expression throws, or yields {@code null} or an empty
     * string
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
            throw new IllegalArgumentException("Lock key '" + expression.getExpressionString() + "' of "
                    + operation.description() + " could not be evaluated: " + ex.getMessage(), ex);
        }
        String key = (value != null) ? value.toString() : null;
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("Lock key '" + expression.getExpressionString() + "' of "
                    + operation.description() + " evaluated to " + ((key == null) ? "null" : "an empty string")
                    + parameterNameHint(method));
        }
        return key;
    }

    private static String parameterNameHint(Method method) {
        Parameter[] parameters = method.getParameters();
        boolean namesMissing = Arrays.stream(parameters).anyMatch((parameter) -> !parameter.isNamePresent());
        return namesMissing ? " (parameter names are not available: compile with -parameters, or use #p0, #p1, ...)"
                : "";
    }
}
