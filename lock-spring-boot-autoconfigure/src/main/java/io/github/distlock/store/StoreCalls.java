package io.github.distlock.store;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waiting for a store client's asynchronous call within a {@link Wait}, whatever the client's own timeouts. */
public final class StoreCalls {

    /**
     * How long an acquisition that gave up waits at most for the store to confirm its entry's
     * removal, so that an acquisition that follows it (in any process) does not find it in its way.
     */
    private static final long GIVE_UP_CONFIRM_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private StoreCalls() {
    }

    /**
     * Waits for the removal of a given-up entry to be confirmed: briefly, never past the request
     * timeout, and never past {@code attempt}, so that a timed acquisition returns at its timeout
     * (and a try-once within its first attempt's bound) while the removal goes on in the background.
     * Interrupts do not end it: an acquisition that was interrupted keeps its interrupt status.
     * @param removal completes when the store confirmed the removal
     * @param attempt the bound of the acquisition's attempt
     * @param requestTimeoutNanos the store's request timeout
     * @return whether the store confirmed within that bound; if not, the removal goes on
     */
    public static boolean awaitGiveUpConfirmation(Future<?> removal, Wait attempt, long requestTimeoutNanos) {
        try {
            await(removal, attempt.atMost(Math.min(requestTimeoutNanos, GIVE_UP_CONFIRM_NANOS)).interruptible(false),
                    "Removing the lock entry");
            return true;
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            return false;
        }
    }

    /**
     * Waits for a call within {@code wait}; gives up on it (cancels the future) when the wait is
     * over or interrupted.
     * @param call the call
     * @param wait the bound
     * @param what the call, for messages
     * @param <T> its result
     * @return its answer
     * @throws StoreUnavailableException if it failed or got no answer in time
     * @throws InterruptedException if {@code wait} is interruptible and the thread was interrupted
     */
    public static <T> T await(Future<T> call, Wait wait, String what)
            throws StoreUnavailableException, InterruptedException {
        try {
            return wait.block(remaining -> {
                try {
                    return call.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
                }
                catch (TimeoutException ex) {
                    throw new StoreUnavailableException(what + " got no answer in time", null);
                }
                catch (ExecutionException ex) {
                    Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
                    throw new StoreUnavailableException(what + " failed: " + cause.getMessage(), cause);
                }
                catch (CancellationException ex) {
                    // Cancelled by the client, not by this wait: Lettuce cancels the commands it still buffers
                    // for a connection that is closed (a pair replaced while reconnecting). No answer came, as
                    // for any other failure; the future's get() throws this one unwrapped.
                    throw new StoreUnavailableException(what + " was cancelled by the client (its connection was "
                            + "closed)", ex);
                }
            });
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            call.cancel(false);
            throw ex;
        }
    }

    /** What a store's {@link LockStore#connect()} does on its connect thread. */
    @FunctionalInterface
    public interface Connecting {

        /**
         * Starts the store's session (and what else it needs) within the store's request timeout.
         * @throws StoreUnavailableException if the store did not answer in time or failed
         * @throws InterruptedException if the connect thread was interrupted (the store is closing)
         */
        void connect() throws StoreUnavailableException, InterruptedException;
    }

    /**
     * Runs {@code connecting} on {@code executor}, off the caller's thread and off the store's
     * timer threads: a connect may wait a request timeout.
     * @param store the store that connects
     * @param executor its connect threads, which refuse work once it is closed
     * @param where the store, for messages
     * @param connecting what connecting does
     * @return completes when connected; fails with the reason, also when the store is closed or has
     * no thread free (never throws: health probes call it at any time)
     */
    public static CompletableFuture<Void> connect(LockStore store, Executor executor, String where,
            Connecting connecting) {
        CompletableFuture<Void> connected = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    connecting.connect();
                    connected.complete(null);
                }
                catch (StoreUnavailableException | InterruptedException | RuntimeException ex) {
                    connected.completeExceptionally(new IllegalStateException("Could not connect to " + where + ": "
                            + ex.getMessage(), ex));
                }
            });
        }
        catch (RejectedExecutionException ex) {
            connected.completeExceptionally(new IllegalStateException(store.isClosed() ? "The lock registry is closed"
                    : "Could not connect to " + where + ": no thread of the lock registry was free", ex));
        }
        return connected;
    }
}
