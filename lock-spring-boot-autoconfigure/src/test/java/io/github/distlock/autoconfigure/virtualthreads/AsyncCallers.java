package io.github.distlock.autoconfigure.virtualthreads;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.scheduling.annotation.Async;

/**
 * Calls {@link LockedWork}'s locked methods on the application's task executor ({@code @Async}):
 * with {@code spring.threads.virtual.enabled=true}, Spring Boot's {@code SimpleAsyncTaskExecutor}
 * runs each call on a virtual thread of its own.
 */
public class AsyncCallers {

    private final LockedWork work;

    public AsyncCallers(LockedWork work) {
        this.work = work;
    }

    /**
     * Calls the unfair or fair locked method once every caller of the round has started, so that they
     * all wait at once.
     * @param key the key
     * @param fair which method
     * @param started counted down on start, awaited before the call
     * @return done when the call returned
     */
    @Async
    public CompletableFuture<Void> call(int key, boolean fair, CountDownLatch started) throws InterruptedException {
        started.countDown();
        if (!started.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not every caller started within 60 s: " + started.getCount()
                    + " missing (does the executor limit its concurrency?)");
        }
        if (fair) {
            this.work.fair(key);
        }
        else {
            this.work.unfair(key);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** @return done when {@link LockedWork#pinCanary()}, called on the executor's thread, returned */
    @Async
    public CompletableFuture<Void> pinCanary() {
        this.work.pinCanary();
        return CompletableFuture.completedFuture(null);
    }
}
