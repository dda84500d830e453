package io.github.distlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method while holding a distributed lock: no two calls with the same key run
 * at the same time in any instance that shares the lock store.
 *
 * <pre class="code">
 * &#64;DistributedLock(key = "'order:' + #orderId", fair = true, waitTimeout = "10s")
 * public void ship(String orderId) { ... }
 *
 * // a scheduled job that must run on one instance only: the others skip the run
 * &#64;Scheduled(cron = "0 0 * * * *")
 * &#64;DistributedLock(key = "'hourly-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
 * public void hourlyReport() { ... }
 * </pre>
 *
 * <p>The lock is taken by the {@code DistributedLock} interceptor of a Spring AOP proxy, so the
 * method must be called through the bean (not from inside the same object), and must be neither
 * private nor static. The annotation may be placed on an interface method or a superclass
 * method; JDK and CGLIB proxies are both supported.
 *
 * <p>Order of events around a call:
 * <ol>
 * <li>the {@link #key() key} is evaluated; if that throws, or the result is {@code null} or
 * empty, the call fails and no lock is taken;</li>
 * <li>the lock is acquired, waiting at most {@link #waitTimeout()}; on timeout see
 * {@link #onTimeout()};</li>
 * <li>the method runs, with the lock available from {@link io.github.distlock.LockContext};
 * any {@code @Transactional} transaction of the same method begins and completes inside the lock
 * (see {@code distributed-lock.aspect-order});</li>
 * <li>the lock is released; if it was lost while the method ran, see {@link #onLockLost()}.</li>
 * </ol>
 *
 * <p>Calls that reenter a key the thread already holds (a locked method calling another one with
 * the same key) do not wait. Methods returning {@link java.util.concurrent.CompletionStage},
 * {@link java.util.concurrent.Future} or a reactive type are rejected at start-up: the lock would
 * be released before the asynchronous work completes.
 *
 * <p>Every attribute is checked when the application starts: an unparsable key, a key that
 * references a variable the method does not have (a misspelt parameter, a position out of range,
 * an unknown {@code #root} property, or any parameter name when the class was compiled without
 * {@code -parameters}), a malformed wait timeout or an unresolvable placeholder fail start-up with
 * a message naming the method.
 *
 * <p>It may also be put on an annotation of your own, which then locks the methods it is on (in
 * the proxy mode, {@code distributed-lock.aop.mode=proxy}), with the attributes given there.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

    /**
     * SpEL expression evaluated for each call; its result, turned into a string, is the lock key
     * verbatim. The expression sees the parameters by name ({@code #orderId}, which needs
     * compilation with {@code -parameters}) and by position ({@code #p0} or {@code #a0}),
     * {@code #root.method}, {@code #root.methodName}, {@code #root.target},
     * {@code #root.targetClass}, {@code #root.args}, and beans as {@code @beanName}. A constant
     * key is a string literal: {@code "'nightly-report'"}; a prefix is written
     * {@code "'order:' + #id"}.
     * <p>Empty (the default) locks the method as a whole: the key is the fully qualified name of
     * the class that declares the method, a dot and the method name (overloads share it).
     * @return the key expression, or empty for one lock per method
     */
    String key() default "";

    /**
     * Whether waiting callers are served in the order they started waiting, across all
     * instances. Fair and unfair calls with the same key exclude each other; an unfair call may
     * take a free lock ahead of queued fair callers.
     * @return whether to wait fairly
     */
    boolean fair() default false;

    /**
     * How long to wait for the lock: a Spring Boot duration such as {@code 500ms}, {@code 10s},
     * {@code 1m} or {@code PT10S} (a bare number means milliseconds), or a {@code ${...}}
     * placeholder resolving to one. {@code 0} tries once without waiting. Empty (the default)
     * uses {@code distributed-lock.wait-timeout}.
     * <p>The call waits for the lock at most this long, and gives up no later than one second
     * after it (or the store's {@code request-timeout} after it, if that is shorter): every store
     * attempt's calls get at least that long, so a timeout under a second against a store that
     * does not answer, or a wait whose entry is lost in the store just before its timeout (the
     * wait then queues again), can end that much later. See
     * {@link io.github.distlock.FencedLock#tryLock(long, java.util.concurrent.TimeUnit)}.
     * @return the wait timeout, or empty for the configured default
     */
    String waitTimeout() default "";

    /**
     * What to do when the lock is still held by someone else after {@link #waitTimeout()}:
     * throw {@link io.github.distlock.LockAcquisitionException} (the default) or skip the call.
     * @return the timeout policy
     */
    OnTimeout onTimeout() default OnTimeout.FAIL;

    /**
     * How to report a lock that was lost while the method ran: throw
     * {@link io.github.distlock.LockLostException} after the call (the default) or log a warning.
     * Either way an {@link io.github.distlock.aop.LockLostEvent} is published.
     * @return the lost-lock policy
     */
    OnLockLost onLockLost() default OnLockLost.FAIL;
}
