package io.github.distlock.sample.demo;

import java.time.Duration;
import java.time.LocalTime;

import io.github.distlock.FencedLock;
import io.github.distlock.LockContext;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.sample.demo.DemoEvent.Kind;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The critical section of the demo: holds the lock for a while and says so. One method per
 * fairness, since {@code fair} is part of the annotation, and one for the unfair run's newcomer,
 * which does not wait in line but calls {@link FencedLock#tryLock()} until it succeeds.
 */
@Component
@Profile("demo")
public class DemoWorker {

    private final LockRegistry registry;

    public DemoWorker(LockRegistry registry) {
        this.registry = registry;
    }

    @DistributedLock(key = "#key", fair = true, waitTimeout = "${demo.wait-timeout}")
    public void holdFairly(String key, int process, int worker, Duration hold) throws InterruptedException {
        hold(process, worker, hold);
    }

    @DistributedLock(key = "#key", waitTimeout = "${demo.wait-timeout}")
    public void holdUnfairly(String key, int process, int worker, Duration hold) throws InterruptedException {
        hold(process, worker, hold);
    }

    /**
     * Takes the unfair lock {@code key} with {@link FencedLock#tryLock()}, again and again until
     * it succeeds: a newcomer that never queues, so it gets the lock at the first moment it is
     * free, whoever else is waiting. While another thread of this process holds the key, a try
     * fails at the process's local gate without a round trip to etcd; when the gate opens, the try
     * that gets through it takes the lock if no older entry is queued in etcd.
     * @param timeout how long to keep trying
     */
    public void holdWhenFree(String key, int process, int worker, Duration hold, Duration timeout)
            throws InterruptedException {
        FencedLock lock = this.registry.obtain(key, false);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!lock.tryLock()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no tryLock() succeeded within " + timeout.toMillis() + " ms");
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            Thread.onSpinWait();
        }
        try {
            print(new DemoEvent(LocalTime.now(), process, worker, Kind.ACQUIRED, lock.getFence()));
            Thread.sleep(hold.toMillis());
            print(new DemoEvent(LocalTime.now(), process, worker, Kind.RELEASED, 0));
        }
        finally {
            lock.unlock();
        }
    }

    /**
     * Takes and releases a lock once, so that the first real acquisition of the process does not
     * pay for class loading, the session lease and the watch stream, which would delay its place
     * in the queue behind its printed arrival.
     */
    @DistributedLock(key = "#key", fair = true)
    public void warmUp(String key) {
        // Nothing to do: taking the lock is the point.
    }

    private static void hold(int process, int worker, Duration hold) throws InterruptedException {
        print(new DemoEvent(LocalTime.now(), process, worker, Kind.ACQUIRED, LockContext.currentFence()));
        Thread.sleep(hold.toMillis());
        // Printed just before the lock is released, so that the next "acquired" always comes after it.
        print(new DemoEvent(LocalTime.now(), process, worker, Kind.RELEASED, 0));
    }

    static void print(DemoEvent event) {
        System.out.println(event.format());
    }
}
