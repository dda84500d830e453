package io.github.distlock.sample.web;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.sample.NotFoundException;
import io.github.distlock.sample.hold.InvalidHoldTimeException;
import io.github.distlock.sample.orders.StaleFenceException;
import io.github.distlock.sample.sale.InvalidQuantityException;
import io.github.distlock.sample.sale.SoldOutException;
import io.github.distlock.sample.store.StoreUnavailableException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Turns failures into RFC 9457 problem details ({@code application/problem+json}), each with a
 * {@code code} property that tells them apart:
 * <ul>
 * <li>404 {@code not-found}: no such order or item;</li>
 * <li>400 {@code invalid-quantity}: a quantity that is not a number or too small;
 * {@code invalid-seconds}: a hold time that is not a number or out of range; Spring MVC's other
 * 400s (a missing parameter, say) come from the base class;</li>
 * <li>409 {@code lock-busy}: the lock was held by someone else for the whole wait (with the
 * holder), {@code sold-out}, or {@code stale-fence}: a write from a holder that lost its lock;</li>
 * <li>503 {@code store-unavailable}: the store (etcd, Redis, ZooKeeper or the database) cannot be reached, for
 * data or for locks, or {@code lock-lost}: the lock was lost during the call, whose outcome is
 * then uncertain (the calls are idempotent: retry).</li>
 * </ul>
 */
@RestControllerAdvice
class ApiExceptionHandler extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);

    private static final String RETRY_AFTER_SECONDS = "5";

    @ExceptionHandler
    ResponseEntity<ProblemDetail> notFound(NotFoundException ex) {
        ProblemDetail problem = problem(HttpStatus.NOT_FOUND, "not-found", ex.getMessage());
        problem.setProperty(ex.getKind(), ex.getId());
        return ResponseEntity.of(problem).build();
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> invalidQuantity(InvalidQuantityException ex) {
        return ResponseEntity.of(problem(HttpStatus.BAD_REQUEST, "invalid-quantity", ex.getMessage())).build();
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> invalidHoldTime(InvalidHoldTimeException ex) {
        return ResponseEntity.of(problem(HttpStatus.BAD_REQUEST, "invalid-seconds", ex.getMessage())).build();
    }

    /** A parameter that is not a number: {@code code} tells which one. */
    @Override
    protected ResponseEntity<Object> handleTypeMismatch(TypeMismatchException ex, HttpHeaders headers,
            HttpStatusCode status, WebRequest request) {
        String name = ex.getPropertyName();
        ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, "invalid-" + name,
                name + " must be a whole number, got '" + ex.getValue() + "'");
        return ResponseEntity.of(problem).build();
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> soldOut(SoldOutException ex) {
        ProblemDetail problem = problem(HttpStatus.CONFLICT, "sold-out", ex.getMessage());
        problem.setProperty("stockLeft", ex.getStockLeft());
        return ResponseEntity.of(problem).build();
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> staleFence(StaleFenceException ex) {
        ProblemDetail problem = problem(HttpStatus.CONFLICT, "stale-fence", ex.getMessage());
        problem.setProperty("fence", ex.getFence());
        problem.setProperty("storedFence", ex.getStoredFence());
        return ResponseEntity.of(problem).build();
    }

    /**
     * Replaces the starter's own mapping (409 or 503 without key or holder): this demo shows the
     * holder and the key to its clients.
     */
    @ExceptionHandler
    ResponseEntity<ProblemDetail> lockNotAcquired(LockAcquisitionException ex) {
        if (ex.getReason() != LockAcquisitionException.Reason.TIMED_OUT) {
            return unavailable("store-unavailable", ex.getMessage());
        }
        ProblemDetail problem = problem(HttpStatus.CONFLICT, "lock-busy", ex.getMessage());
        problem.setProperty("key", ex.getKey());
        problem.setProperty("holder", ex.getHolder());
        problem.setProperty("waitedMillis", ex.getWaited().toMillis());
        return ResponseEntity.of(problem).build();
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> lockLost(LockLostException ex) {
        log.warn("{}", ex.getMessage());
        return unavailable("lock-lost", ex.getMessage() + "; the outcome is uncertain, retry the request");
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> storeUnavailable(StoreUnavailableException ex) {
        return unavailable("store-unavailable", ex.getMessage());
    }

    private static ResponseEntity<ProblemDetail> unavailable(String code, @Nullable String detail) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
            .header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS)
            .body(problem(HttpStatus.SERVICE_UNAVAILABLE, code, detail));
    }

    private static ProblemDetail problem(HttpStatus status, String code, @Nullable String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setProperty("code", code);
        return problem;
    }
}
