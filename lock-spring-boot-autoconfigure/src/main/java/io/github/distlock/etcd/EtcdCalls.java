package io.github.distlock.etcd;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/** Bounded waits on jetcd futures, and what etcd failures mean. */
final class EtcdCalls {

    /** Pause between attempts after an etcd request failed. */
    static final long RETRY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private EtcdCalls() {
    }

    /**
     * Waits for {@code call} within {@code wait}; see {@link Wait#block} for interrupts.
     * @throws StoreUnavailableException if the call failed, was cancelled or did not answer in time
     */
    static <T> T await(CompletableFuture<T> call, Wait wait, String what)
            throws StoreUnavailableException, InterruptedException {
        long timeoutMillis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, wait.remainingNanos()));
        return wait.block(remaining -> {
            try {
                return call.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
            }
            catch (TimeoutException ex) {
                throw new StoreUnavailableException(what + " got no answer within " + timeoutMillis + " ms", ex);
            }
            catch (ExecutionException ex) {
                throw new StoreUnavailableException(what + " failed: " + describe(ex.getCause()), ex.getCause());
            }
            catch (CancellationException ex) {
                throw new StoreUnavailableException(what + " was cancelled", ex);
            }
        });
    }

    /**
     * Waits for {@code call} at most {@code timeoutNanos}, ignoring interrupts (the interrupt
     * status is restored before returning).
     */
    static <T> T awaitUninterruptibly(CompletableFuture<T> call, long timeoutNanos, String what)
            throws StoreUnavailableException {
        try {
            return await(call, Wait.timeout(timeoutNanos, false), what);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("an uninterruptible wait was interrupted", ex);
        }
    }

    /**
     * The attempts of one call that is sent again after a while without an answer: the first
     * answer of any attempt counts, also one that comes after a later attempt was sent. One thread
     * sends the attempts and waits for the newest one's {@link #send answer}.
     *
     * <p>Invariants: every answer handed out is the first one; the first answer has one listener,
     * however many attempts were sent (each failed one would otherwise leave one until an answer
     * came), and an attempt's own listener goes with its answer or failure.
     */
    static final class Attempts<T> {

        private final CompletableFuture<T> firstAnswer = new CompletableFuture<>();

        private final BiConsumer<T, T> laterAnswer;

        /** What the sender of the newest attempt waits on. */
        private volatile CompletableFuture<T> newest = new CompletableFuture<>();

        Attempts() {
            this((later, first) -> {
            });
        }

        /**
         * @param laterAnswer told of each answer that came after the first: that answer, then the
         * first; on the thread that completed the attempt
         */
        Attempts(BiConsumer<T, T> laterAnswer) {
            this.laterAnswer = laterAnswer;
            this.firstAnswer.thenAccept((answer) -> this.newest.complete(answer));
        }

        /**
         * Takes the next attempt.
         * @return completes with the first answer of any attempt, or with this attempt's failure
         */
        CompletableFuture<T> send(CompletableFuture<T> attempt) {
            CompletableFuture<T> answer = new CompletableFuture<>();
            this.newest = answer;
            // The first answer's listener may have read the previous attempt's: look after setting ours.
            if (this.firstAnswer.isDone()) {
                answer.complete(this.firstAnswer.join());
            }
            attempt.whenComplete((response, failure) -> {
                if (failure != null) {
                    answer.completeExceptionally(failure);
                    return;
                }
                if (!this.firstAnswer.complete(response)) {
                    this.laterAnswer.accept(response, this.firstAnswer.join());
                }
                answer.complete(this.firstAnswer.join());
            });
            return answer;
        }

        /** Completes with the first answer of any attempt; never exceptionally. */
        CompletableFuture<T> firstAnswer() {
            return this.firstAnswer;
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

    static String describe(@Nullable Throwable failure) {
        if (failure == null) {
            return "unknown error";
        }
        String message = failure.getMessage();
        return (message != null) ? message : failure.getClass().getSimpleName();
    }
}
