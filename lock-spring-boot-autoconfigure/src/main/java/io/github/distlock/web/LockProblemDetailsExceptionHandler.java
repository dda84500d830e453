package io.github.distlock.web;

import io.github.distlock.LockAcquisitionException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers a request whose {@code @DistributedLock} method could not get its lock with an RFC 9457
 * problem detail ({@code application/problem+json}) instead of a bare 500, by
 * {@link LockAcquisitionException#getReason()}:
 * <ul>
 * <li>409 Conflict, {@code code} {@code lock-busy}: another owner held the lock for the whole
 * wait timeout; the same request may succeed later;</li>
 * <li>503 Service Unavailable, {@code code} {@code lock-store-unavailable}: the lock store failed
 * or could not be reached, or the application is shutting down (the registry closed while the
 * request waited, the waiting thread interrupted).</li>
 * </ul>
 * The body names neither the lock key nor its holder, which may say more about the application
 * than its clients should learn; {@code waitedMillis} says how long the request waited.
 * <p>
 * Ordered last: an exception handler of the application for {@link LockAcquisitionException} (or a
 * supertype) takes precedence when it is ordered before this one, or has no order and is one of
 * the application's own beans (registered before auto-configured ones); a bean of this type
 * replaces the auto-configured one.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class LockProblemDetailsExceptionHandler {

    /**
     * @param failure why the lock could not be had
     * @return the problem detail, with its status
     */
    @ExceptionHandler
    public ResponseEntity<ProblemDetail> lockNotAcquired(LockAcquisitionException failure) {
        boolean busy = failure.getReason() == LockAcquisitionException.Reason.TIMED_OUT;
        HttpStatus status = busy ? HttpStatus.CONFLICT : HttpStatus.SERVICE_UNAVAILABLE;
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, busy
                ? "The resource this request works on is locked by another request; try again later."
                : "The lock this request needs cannot be taken now: its lock store is unavailable; try again later.");
        problem.setTitle(busy ? "Locked" : "Lock store unavailable");
        problem.setProperty("code", busy ? "lock-busy" : "lock-store-unavailable");
        problem.setProperty("waitedMillis", failure.getWaited().toMillis());
        return ResponseEntity.of(problem).build();
    }
}
