package io.github.distlock.aop;

import java.time.Duration;

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
 */
final class LockFailureHandler {

    private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

    private final ApplicationEventPublisher events;

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
            if (logger.isDebugEnabled()) {
                logger.debug("Skipped " + operation.description() + ": lock '" + lock.getKey() + "' is held elsewhere");
            }
            return operation.skippedResult();
        }
        // What the wait last saw ahead of it: asking the store now could block a call whose wait is over.
        throw new LockAcquisitionException(lock.getKey(), waited, lock.getLastSeenHolder(),
                "another owner held it for the whole wait timeout (" + operation.waitTimeout().toMillis()
                        + " ms) of " + operation.description(), null);
    }

    /**
     * Handles a lock that was lost while the method ran: publishes a {@link LockLostEvent}, then
     * tells what the call must throw.
     * @param operation the method's operation
     * @param target the bean called
     * @param lost how the lock reported the loss
     * @param failure what the method threw, or {@code null} if it returned
     * @return the exception the call must throw, or {@code null} to return the method's result
     */
    @Nullable Throwable lockLost(LockOperation operation, Object target, LockLostException lost,
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
     * @param target the bean called
     * @param lost how the lock reported the loss
     */
    void publish(LockOperation operation, Object target, LockLostException lost) {
        try {
            this.events.publishEvent(new LockLostEvent((target != null) ? target : operation.method(),
                    operation.method(), lost));
        }
        catch (RuntimeException ex) {
            lost.addSuppressed(ex);
        }
    }
}
