package io.github.distlock.store;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.core.Wait;

/** Waiting for a store client's asynchronous call within a {@link Wait}, whatever the client's own timeouts. */
public final class StoreCalls {

    private StoreCalls() {
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
            });
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            call.cancel(false);
            throw ex;
        }
    }
}
