package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.FencedLock;

/**
 * Holds a lock on a thread of its own until told to release it, for tests that act on the store
 * while a holder's unlock is under way (pausing the server it waits for, say).
 */
public final class BackgroundHolder {

    private final CompletableFuture<Void> held = new CompletableFuture<>();

    private final CountDownLatch release = new CountDownLatch(1);

    private final CompletableFuture<Void> released = new CompletableFuture<>();

    private final Thread thread;

    private BackgroundHolder(FencedLock lock, Duration timeout, String threadName) {
        this.thread = new Thread(() -> {
            try {
                if (!lock.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    this.released.completeExceptionally(new IllegalStateException("not acquired within " + timeout));
                    return;
                }
                this.held.complete(null);
                this.release.await();
                lock.unlock();
                this.released.complete(null);
            }
            catch (Throwable ex) {
                this.released.completeExceptionally(ex);
            }
        }, threadName);
        this.thread.setDaemon(true);
    }

    /**
     * Starts a thread that acquires {@code lock} and holds it until {@link #release()}.
     * @param lock the lock to hold
     * @param timeout how long to wait for it
     * @param threadName the thread's name
     * @return the holder, once it holds the lock
     * @throws IllegalStateException if it did not hold the lock (within about {@code timeout})
     */
    public static BackgroundHolder hold(FencedLock lock, Duration timeout, String threadName)
            throws InterruptedException {
        BackgroundHolder holder = new BackgroundHolder(lock, timeout, threadName);
        holder.thread.start();
        try {
            CompletableFuture.anyOf(holder.held, holder.released).get(timeout.toMillis() * 2, TimeUnit.MILLISECONDS);
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("not held", ex.getCause());
        }
        catch (TimeoutException ex) {
            throw new IllegalStateException("not held within " + timeout, ex);
        }
        return holder;
    }

    /** Lets the thread unlock. */
    public void release() {
        this.release.countDown();
    }

    /** @return completes once the unlock returned, exceptionally with what it threw */
    public CompletableFuture<Void> released() {
        return this.released;
    }

    /** @return whether the thread is inside a method named {@code method} of {@code type} right now */
    public boolean isIn(Class<?> type, String method) {
        return Arrays.stream(this.thread.getStackTrace())
            .anyMatch(frame -> frame.getClassName().equals(type.getName()) && frame.getMethodName().equals(method));
    }
}
