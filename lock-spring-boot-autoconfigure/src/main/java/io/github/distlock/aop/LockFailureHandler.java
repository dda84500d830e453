package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.annotation.OnLockLost;
import io.github.distlock.annotation.OnTimeout;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEventPublisher;

/**
 * Applies a method's {@link OnTimeout} and {@link OnLockLost} policies.
 *
 * <p>A {@link OnTimeout#SKIP} method is typically a scheduled job: while the lock store is down,
 * every tick would fail the same way, so only the start and the end of such an outage are logged,
 * per method.
 */
final class LockFailureHandler {

    private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

    private final ApplicationEventPublisher events;

    private final Set<Method> inOutage = ConcurrentHashMap.newKeySet();

    LockFailureHandler(ApplicationEventPublisher events) {
        this.events = events;
    }

    /**
     * Handles a wait that timed out.
     * @param operation the method's operation
     * @param lock the lock that could not be had
     * @param waited how long the call waited
     * @return what the skipped call returns
     * @throws LockAcquisitionException unless the operation skips timed-out calls
     */
    @Nullable Object timedOut(LockOperation operation, FencedLock lock, Duration waited) {
        if (operation.onTimeout() == OnTimeout.SKIP) {
            // On instances that never win the lock a timeout is the only sign the outage is over,
            // and without it the next outage would not be warned about.
            storeAnswered(operation, lock, "held elsewhere, so this call is skipped as usual");
            if (logger.isDebugEnabled()) {
                logger.debug("Skipped " + operation.description() + ": lock '" + lock.getKey() + "' is held elsewhere");
            }
            return operation.skippedResult();
        }
        // What the wait last saw ahead of it: asking the store now could block a call whose wait is over.
        throw new LockAcquisitionException(LockAcquisitionException.Reason.TIMED_OUT, lock.getKey(), waited,
                lock.getLastSeenHolder(),
                "another owner held it for the whole wait timeout (" + operation.waitTimeout().toMillis()
                        + " ms) of " + operation.description(), null);
    }

    /**
     * Handles a store failure while acquiring: a {@link OnTimeout#SKIP} call is to be skipped,
     * since it cannot run safely without the lock, and a warning is logged when an outage starts
     * for its method; other calls throw the failure.
     * @param operation the method's operation
     * @param failure how the store failed, naming the key
     * @throws LockAcquisitionException {@code failure}, unless the operation skips timed-out calls
     */
    void storeFailed(LockOperation operation, LockAcquisitionException failure) {
        if (operation.onTimeout() != OnTimeout.SKIP) {
            throw failure;
        }
        if (this.inOutage.add(operation.method())) {
            // No stack trace: a scheduler calls again every tick, and the message says it all.
            logger.warn("Skipping " + operation.description() + " while the lock store fails (" + failure.getMessage()
                    + "); further skips of it are logged at DEBUG until the store answers again");
        }
        else if (logger.isDebugEnabled()) {
            logger.debug("Skipped " + operation.description() + ": the lock store still fails (" + failure.getMessage()
                    + ")");
        }
    }

    /**
     * Records that a call got its lock, ending an outage of the store for its method.
     * @param operation the method's operation
     * @param lock the lock acquired
     */
    void acquired(LockOperation operation, FencedLock lock) {
        storeAnswered(operation, lock, "acquired");
    }

    private void storeAnswered(LockOperation operation, FencedLock lock, String how) {
        // Checked first so that calls outside an outage only read the set.
        if (!this.inOutage.isEmpty() && this.inOutage.remove(operation.method())) {
            logger.info("The lock store answers again for " + operation.description() + ": lock '" + lock.getKey()
                    + "' was " + how);
        }
    }

    /**
     * Handles a lock that was lost while the method ran: publishes a {@link LockLostEvent}, then
     * tells what the call must throw.
     * @param operation the method's operation
     * @param target the bean called, or {@code null} if unknown
     * @param lost how the lock reported the loss
     * @param failure what the method threw, or {@code null} if it returned
     * @return the exception the call must throw, or {@code null} to return the method's result
     */
    @Nullable Throwable lockLost(LockOperation operation, @Nullable Object target, LockLostException lost,
            @Nullable Throwable failure) {
        if (failure instanceof LockLostException reported && reported.getKey().equals(lost.getKey())
                && reported.getFence() == lost.getFence()) {
            return failure;
        }
        publish(operation, target, lost);
        if (failure != null) {
            failure.addSuppressed(lost);
            return failure;
        }
        if (operation.onLockLost() == OnLockLost.FAIL) {
            return lost;
        }
        logger.warn("Lock '" + lost.getKey() + "' (fence " + lost.getFence() + ") of " + operation.description()
                + " was lost while the method ran; its work may have overlapped with another holder", lost);
        return null;
    }

    /**
     * Publishes a {@link LockLostEvent}; a listener's failure is added to {@code lost}.
     * @param operation the method's operation
     * @param target the bean called, or {@code null} if unknown (the method is the event's source then)
     * @param lost how the lock reported the loss
     */
    void publish(LockOperation operation, @Nullable Object target, LockLostException lost) {
        try {
            this.events.publishEvent(new LockLostEvent((target != null) ? target : operation.method(),
                    operation.method(), lost));
        }
        catch (RuntimeException ex) {
            lost.addSuppressed(ex);
        }
    }
}
