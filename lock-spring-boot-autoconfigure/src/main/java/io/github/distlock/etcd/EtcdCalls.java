package io.github.distlock.etcd;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;

/** Bounded waits on jetcd futures. */
final class EtcdCalls {

    /** Pause between attempts after an etcd request failed. */
    static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private EtcdCalls() {
    }

    /**
     * Waits for {@code call} at most {@code timeoutNanos}. An interruptible wait throws
     * {@link InterruptedException}; an uninterruptible one keeps waiting and restores the
     * interrupt status before returning.
     */
    static <T> T await(CompletableFuture<T> call, long timeoutNanos, boolean interruptible, String what)
            throws EtcdCallFailedException, InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                }
                catch (InterruptedException ex) {
                    if (interruptible) {
                        throw ex;
                    }
                    interrupted = true;
                }
                catch (TimeoutException ex) {
                    throw new EtcdCallFailedException(what + " got no answer within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", ex);
                }
                catch (ExecutionException ex) {
                    throw new EtcdCallFailedException(what + " failed: " + describe(ex.getCause()), ex.getCause());
                }
                catch (CancellationException ex) {
                    throw new EtcdCallFailedException(what + " was cancelled", ex);
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits for {@code call} at most {@code timeoutNanos}, ignoring interrupts (the interrupt
     * status is restored before returning).
     */
    static <T> T awaitUninterruptibly(CompletableFuture<T> call, long timeoutNanos, String what)
            throws EtcdCallFailedException {
        try {
            return await(call, timeoutNanos, false, what);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("an uninterruptible wait was interrupted", ex);
        }
    }

    static boolean isLeaseNotFound(Throwable failure) {
        Throwable cause = failure;
        while (cause != null) {
            if (cause instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.NOT_FOUND) {
                return true;
            }
            // Some calls (lease revoke) fail with the bare gRPC status rather than an EtcdException.
            if (Status.fromThrowable(cause).getCode() == Status.Code.NOT_FOUND) {
                return true;
            }
            cause = cause.getCause();
        }
        return false;
    }

    static String describe(Throwable failure) {
        if (failure == null) {
            return "unknown error";
        }
        String message = failure.getMessage();
        return (message != null) ? message : failure.getClass().getSimpleName();
    }
}
