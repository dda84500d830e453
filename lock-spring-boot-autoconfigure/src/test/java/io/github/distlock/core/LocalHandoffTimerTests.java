package io.github.distlock.core;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LocalHandoff;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The timers that give kept entries back to the store, on a hot key that lingers. */
class LocalHandoffTimerTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final int ROUNDS = 100;

    /**
     * Each round keeps the entry for a waiting thread (a 10 ms timer) where a one-minute linger
     * timer was armed: the replaced timer is cancelled, not left in the timer's queue for a minute
     * with the key's state, one per round.
     */
    @Test
    void aReplacedTimerLeavesTheTimersQueue() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(
                new LocalHandoff(Duration.ofMillis(10), Duration.ofMinutes(1)));
        FencedLock lock = registry.obtain("hot-sku");
        int queuedBefore = timerQueue().size();
        for (int round = 0; round < ROUNDS; round++) {
            // Past the previous round's 10 ms timer, so that the linger arms a timer of its own. Sets
            // the scenario up, nothing waits on it: a slower machine only makes the rounds longer.
            Thread.sleep(20);
            // Lingers after this: a one-minute timer.
            lock.lock();
            lock.unlock();
            lock.lock();
            CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> {
                FencedLock other = registry.obtain("hot-sku");
                other.lock();
                other.unlock();
            });
            await().atMost(BOUND).pollInterval(Duration.ofMillis(1))
                .until(() -> registry.getWaitingThreadCount() == 1);
            // Kept for the waiter: a 10 ms timer replaces the linger's.
            lock.unlock();
            waiter.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        }
        assertThat(timerQueue().size() - queuedBefore).as("timers left in the queue").isLessThan(ROUNDS / 4);
    }

    private static BlockingQueue<Runnable> timerQueue() throws Exception {
        Field timer = LocalHandoffs.class.getDeclaredField("TIMER");
        timer.setAccessible(true);
        return ((ScheduledThreadPoolExecutor) timer.get(null)).getQueue();
    }
}
