package io.github.distlock.sample.demo;

import java.time.Duration;
import java.time.LocalTime;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.sample.demo.DemoEvent.Kind;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The critical section of the demo: holds the lock for a while and says so. One method per
 * fairness, since {@code fair} is part of the annotation.
 */
@Component
@Profile("demo")
public class DemoWorker {

    @DistributedLock(key = "#key", fair = true, waitTimeout = "${demo.wait-timeout}")
    public void holdFairly(String key, int process, int worker, Duration hold) throws InterruptedException {
        hold(process, worker, hold);
    }

    @DistributedLock(key = "#key", waitTimeout = "${demo.wait-timeout}")
    public void holdUnfairly(String key, int process, int worker, Duration hold) throws InterruptedException {
        hold(process, worker, hold);
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
