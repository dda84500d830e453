package io.github.distlock.aop;

import org.jspecify.annotations.Nullable;

/**
 * A {@code @DistributedLock} annotation that cannot work as written, found when its bean is
 * created (so start-up fails, and Spring Boot's failure analysis names the method, the problem and
 * what to do): a key that is not valid SpEL or names no parameter, a wait timeout that is not a
 * duration, a method the proxy cannot intercept, and the like.
 */
public class InvalidLockOperationException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String method;

    private final String problem;

    private final String action;

    /**
     * Creates an exception.
     * @param method the annotated method, {@code com.acme.Orders.pay(String)}
     * @param problem what is wrong with its annotation
     * @param action what to do about it
     * @param cause what found the problem, or {@code null}
     */
    public InvalidLockOperationException(String method, String problem, String action, @Nullable Throwable cause) {
        super("Invalid @DistributedLock on " + method + ": " + problem, cause);
        this.method = method;
        this.problem = problem;
        this.action = action;
    }

    /** @return the annotated method, {@code com.acme.Orders.pay(String)} */
    public String getMethod() {
        return this.method;
    }

    /** @return what is wrong with its annotation */
    public String getProblem() {
        return this.problem;
    }

    /** @return what to do about it */
    public String getAction() {
        return this.action;
    }
}
