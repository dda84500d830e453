package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;

/** Waits for a lock on a thread of its own, as another caller would, for tests that queue a waiter. */
public final class BackgroundAcquirer {

    /** The name of the waiting threads, which is how holders and waiters are named in reads. */
    public static final String THREAD_NAME = "background-waiter";

    private BackgroundAcquirer() {
    }

    /**
     * Starts a daemon thread that waits up to {@code timeout} for {@code lock}, then releases it.
     * @param lock the lock to wait for
     * @param timeout how long to wait
     * @return completes with the fence of the acquisition, or exceptionally if it was not acquired
     */
    public static CompletableFuture<Long> acquireAndRelease(FencedLock lock, Duration timeout) {
        CompletableFuture<Long> fence = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                if (!lock.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    fence.completeExceptionally(new IllegalStateException("not acquired within " + timeout));
                    return;
                }
                long acquired = lock.getFence();
                lock.unlock();
                fence.complete(acquired);
            }
            catch (Throwable ex) {
                fence.completeExceptionally(ex);
            }
        }, THREAD_NAME);
        thread.setDaemon(true);
        thread.start();
        return fence;
    }
}
