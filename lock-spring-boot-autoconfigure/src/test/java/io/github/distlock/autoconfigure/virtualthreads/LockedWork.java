package io.github.distlock.autoconfigure.virtualthreads;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.PinnedThreadRecording;
import org.springframework.scheduling.annotation.Async;

/**
 * The locked methods of {@link VirtualThreadApp}: one lock per key ({@code vt-<key>}), taken fairly or
 * unfairly, and a critical section that records itself in the key's {@link CriticalSectionChecker}
 * (so overlaps and fences that do not increase are found) and counts the calls that ran on virtual
 * threads.
 */
public class LockedWork {

    /** Widens the window in which a broken lock would let two threads in at once. */
    private static final long HOLD_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

    private volatile Round round = new Round(1);

    /**
     * Starts counting afresh.
     * @param keys how many keys the calls use
     * @return the new round's record
     */
    public Round startRound(int keys) {
        Round started = new Round(keys);
        this.round = started;
        return started;
    }

    @DistributedLock(key = "'vt-' + #key")
    public void unfair(int key) {
        section(key, this.round.unfair);
    }

    @DistributedLock(key = "'vt-' + #key", fair = true)
    public void fair(int key) {
        section(key, this.round.fair);
    }

    /**
     * Locked and asynchronous: Spring's async advice runs first, so the lock is taken on the executor's
     * thread. It returns nothing ({@code @DistributedLock} refuses methods that return a future, whose
     * work could outlive the lock), so it reports through {@code done}.
     * @param key the key
     * @param done completed when the critical section is over, exceptionally if it failed
     */
    @Async
    @DistributedLock(key = "'vt-' + #key", fair = true)
    public void asyncFair(int key, CompletableFuture<Void> done) {
        try {
            section(key, this.round.asyncFair);
            done.complete(null);
        }
        catch (RuntimeException ex) {
            done.completeExceptionally(ex);
        }
    }

    /** Pins its carrier inside a locked call, for the recording's canary. */
    @DistributedLock(key = "'vt-canary'")
    public void pinCanary() {
        PinnedThreadRecording.pinCanary();
    }

    private void section(int key, AtomicInteger path) {
        Round current = this.round;
        Thread thread = Thread.currentThread();
        String name = thread.getName().isEmpty() ? thread.toString() : thread.getName();
        long fence = LockContext.currentFence();
        current.checkers[key].enter("app", name, fence);
        // Parks (an interrupt only ends it early): another caller gets a chance to overlap, if it could.
        LockSupport.parkNanos(HOLD_NANOS);
        current.checkers[key].exit("app", name, fence);
        current.acquired[key].incrementAndGet();
        path.incrementAndGet();
        if (PinnedThreadRecording.isVirtual(thread)) {
            current.virtual.incrementAndGet();
        }
    }

    /** What the calls of one round did. */
    public static final class Round {

        final CriticalSectionChecker[] checkers;

        final AtomicInteger[] acquired;

        final AtomicInteger unfair = new AtomicInteger();

        final AtomicInteger fair = new AtomicInteger();

        final AtomicInteger asyncFair = new AtomicInteger();

        final AtomicInteger virtual = new AtomicInteger();

        Round(int keys) {
            this.checkers = new CriticalSectionChecker[keys];
            this.acquired = new AtomicInteger[keys];
            for (int k = 0; k < keys; k++) {
                this.checkers[k] = new CriticalSectionChecker();
                this.acquired[k] = new AtomicInteger();
            }
        }
    }
}
