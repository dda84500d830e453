package io.github.distlock.aop;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockContext;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.aop.LockMetrics.HoldOutcome;
import io.github.distlock.aop.LockMetrics.WaitOutcome;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.util.Assert;

/**
 * Runs {@link io.github.distlock.annotation.DistributedLock @DistributedLock} methods while
 * holding their lock. Per call it evaluates the key, acquires the lock within the wait timeout,
 * makes it available through {@link LockContext}, proceeds, releases the lock and reports a lock
 * lost meanwhile. A call that skips timeouts also skips a store failure while acquiring.
 * Everything about a method that does not depend on the call is worked out once, by the
 * {@link LockOperationSource}. Waits and holds are reported to {@link LockMetrics}, if given.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {

    private static final Logger logger = LoggerFactory.getLogger(DistributedLockInterceptor.class);

    private final LockOperationSource operations;

    private final ObjectProvider<LockRegistry> registryProvider;

    private final LockKeyResolver keys;

    private final LockFailureHandler failures;

    private final @Nullable ObjectProvider<LockMetrics> metricsProvider;

    private volatile @Nullable LockRegistry registry;

    private volatile @Nullable LockMetrics metrics;

    private final AtomicBoolean metricsFailureLogged = new AtomicBoolean();

    /**
     * Creates an interceptor.
     * @param operations where the annotated methods' operations come from
     * @param registryProvider the registry, looked up on the first call
     * @param beanFactory resolves {@code @bean} references in key expressions, or {@code null}
     * @param events where {@link LockLostEvent}s are published
     */
    public DistributedLockInterceptor(LockOperationSource operations, ObjectProvider<LockRegistry> registryProvider,
            @Nullable BeanFactory beanFactory, ApplicationEventPublisher events) {
        this(operations, registryProvider, beanFactory, events, null);
    }

    /**
     * Creates an interceptor that reports to {@link LockMetrics}.
     * @param operations where the annotated methods' operations come from
     * @param registryProvider the registry, looked up on the first call
     * @param beanFactory resolves {@code @bean} references in key expressions, or {@code null}
     * @param events where {@link LockLostEvent}s are published
     * @param metricsProvider the metrics, looked up on the first call (none if it has none or
     * several), or {@code null} for none
     */
    public DistributedLockInterceptor(LockOperationSource operations, ObjectProvider<LockRegistry> registryProvider,
            @Nullable BeanFactory beanFactory, ApplicationEventPublisher events,
            @Nullable ObjectProvider<LockMetrics> metricsProvider) {
        Assert.notNull(operations, "operations must not be null");
        Assert.notNull(registryProvider, "registryProvider must not be null");
        Assert.notNull(events, "events must not be null");
        this.operations = operations;
        this.registryProvider = registryProvider;
        this.keys = new LockKeyResolver(beanFactory);
        this.failures = new LockFailureHandler(events);
        this.metricsProvider = metricsProvider;
    }

    @Override
    public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = (target != null) ? AopProxyUtils.ultimateTargetClass(target) : null;
        LockOperation operation = this.operations.getOperation(invocation.getMethod(), targetClass);
        if (operation == null) {
            return invocation.proceed();
        }
        String key = this.keys.resolve(operation, target,
                (targetClass != null) ? targetClass : operation.method().getDeclaringClass(), invocation.getArguments());
        FencedLock lock = registry().obtain(key, operation.fair());
        long start = System.nanoTime();
        return switch (acquire(lock, operation, target, start)) {
            case ACQUIRED -> {
                this.failures.acquired(operation, lock);
                yield proceedHolding(lock, operation, invocation, target);
            }
            case TIMEOUT -> this.failures.timedOut(operation, lock, Duration.ofNanos(System.nanoTime() - start));
            case ERROR -> operation.skippedResult();
        };
    }

    /**
     * Waits for the lock.
     * @return how the wait ended: {@link WaitOutcome#ERROR} is returned only for a store failure
     * that the operation skips, and thrown otherwise
     */
    private WaitOutcome acquire(FencedLock lock, LockOperation operation, @Nullable Object target, long start) {
        WaitOutcome outcome = WaitOutcome.ERROR;
        try {
            boolean acquired = lock.tryLock(operation.waitNanos(), TimeUnit.NANOSECONDS);
            outcome = acquired ? WaitOutcome.ACQUIRED : WaitOutcome.TIMEOUT;
            return outcome;
        }
        catch (LockAcquisitionException failure) {
            this.failures.storeFailed(operation, failure);
            return WaitOutcome.ERROR;
        }
        catch (LockLostException lost) {
            // Reentering a hold that was lost meanwhile: the enclosing call still holds it.
            this.failures.publish(operation, target, lost);
            throw lost;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LockAcquisitionException(LockAcquisitionException.Reason.INTERRUPTED, lock.getKey(),
                    Duration.ofNanos(System.nanoTime() - start), null, "the thread was interrupted while waiting", ex);
        }
        finally {
            long waited = System.nanoTime() - start;
            WaitOutcome ended = outcome;
            measure((metrics) -> metrics.waited(lock.getKey(), operation.fair(), ended, waited));
        }
    }

    private @Nullable Object proceedHolding(FencedLock lock, LockOperation operation, MethodInvocation invocation,
            @Nullable Object target) throws Throwable {
        long heldSince = System.nanoTime();
        Object result = null;
        Throwable failure = null;
        try {
            LockContext.Scope scope = LockContext.enter(lock);
            try {
                result = invocation.proceed();
            }
            finally {
                scope.close();
            }
        }
        catch (Throwable ex) {
            failure = ex;
        }
        HoldOutcome ended = HoldOutcome.RELEASED;
        try {
            lock.unlock();
        }
        catch (LockLostException lost) {
            ended = HoldOutcome.LOST;
            failure = this.failures.lockLost(operation, target, lost, failure);
        }
        catch (RuntimeException ex) {
            // The hold is over for this call either way: a store retries a delete that failed
            // on its own, and its lease ends the entry at the latest.
            if (failure == null) {
                failure = ex;
            }
            else {
                failure.addSuppressed(ex);
            }
        }
        long held = System.nanoTime() - heldSince;
        HoldOutcome outcome = ended;
        measure((metrics) -> metrics.held(lock.getKey(), operation.fair(), outcome, held));
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    private LockRegistry registry() {
        LockRegistry registry = this.registry;
        return (registry != null) ? registry : lookUpRegistry(null);
    }

    /**
     * Looks the registry up and keeps it.
     * @param method the annotated method to name if there is none, or {@code null}
     * @throws NoLockRegistryException if there is no registry
     */
    private LockRegistry lookUpRegistry(@Nullable String method) {
        LockRegistry registry = this.registryProvider.getIfAvailable();
        if (registry == null) {
            throw new NoLockRegistryException("@DistributedLock is used"
                    + ((method != null) ? " (on " + method + ")" : "") + " but there is no LockRegistry bean: with "
                    + "distributed-lock.store=etcd put io.etcd:jetcd-core on the class path (lock-spring-boot-starter "
                    + "brings it), set distributed-lock.store=in-memory for a single instance, or define a "
                    + "LockRegistry bean");
        }
        this.registry = registry;
        return registry;
    }

    /**
     * Records through the metrics, which must not change a call: one that throws (or cannot be
     * created) is logged, at WARN the first time, and the call goes on with its lock and its result.
     */
    private void measure(Consumer<LockMetrics> recording) {
        try {
            recording.accept(metrics());
        }
        catch (RuntimeException ex) {
            if (this.metricsFailureLogged.compareAndSet(false, true)) {
                logger.warn("Recording @DistributedLock metrics failed; the locked calls go on without them (later "
                        + "failures are logged at DEBUG)", ex);
            }
            else {
                logger.debug("Recording @DistributedLock metrics failed", ex);
            }
        }
    }

    /**
     * The metrics are looked up late because this interceptor is created early, before the meter
     * registry should be; with several candidates and no primary one, calls are not measured
     * rather than failed.
     */
    private LockMetrics metrics() {
        LockMetrics metrics = this.metrics;
        if (metrics == null) {
            metrics = (this.metricsProvider != null) ? this.metricsProvider.getIfUnique(() -> LockMetrics.NONE)
                    : LockMetrics.NONE;
            this.metrics = metrics;
        }
        return metrics;
    }

    /**
     * Fails if an annotated method was found but no {@link LockRegistry} exists, so that such an
     * application does not start rather than fail on its first locked call.
     * @throws IllegalStateException if annotated methods exist and no registry does
     */
    public void verifyRegistry() {
        String method = this.operations.firstAnnotatedMethod();
        if (method != null && this.registry == null) {
            lookUpRegistry(method);
        }
    }
}
