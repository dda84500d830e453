package io.github.distlock.store;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

/**
 * How long, and how, a caller is prepared to wait: a deadline on the monotonic clock (or none)
 * and whether an interrupt ends the wait. Passed down every call of an acquisition, like Go's
 * {@code context}, instead of a list of timeout parameters.
 *
 * <p>Every blocking step goes through {@link #block(Step)}, the one place that decides what an
 * interrupt means: an interruptible wait throws {@link InterruptedException}; an uninterruptible
 * one keeps waiting and restores the interrupt status when the step is done, as
 * {@link java.util.concurrent.locks.ReentrantLock#lock()} does.
 */
public final class Wait {

    /** Longest deadline a step gets (about 146 years): far enough, and never overflows the clock. */
    private static final long MAX_STEP_NANOS = Long.MAX_VALUE / 2;

    private final boolean timed;

    private final long deadlineNanos;

    private final boolean interruptible;

    private Wait(boolean timed, long deadlineNanos, boolean interruptible) {
        this.timed = timed;
        this.deadlineNanos = deadlineNanos;
        this.interruptible = interruptible;
    }

    /**
     * A wait without a deadline.
     * @param interruptible whether an interrupt ends it
     * @return the wait
     */
    public static Wait untimed(boolean interruptible) {
        return new Wait(false, 0, interruptible);
    }

    /**
     * A wait that ends {@code timeoutNanos} from now; zero or negative means it is already over.
     * @param timeoutNanos how long to wait
     * @param interruptible whether an interrupt ends it
     * @return the wait
     */
    public static Wait timeout(long timeoutNanos, boolean interruptible) {
        return until(System.nanoTime() + Math.max(0, timeoutNanos), interruptible);
    }

    /**
     * A wait that ends at {@code deadlineNanos} on the {@link System#nanoTime()} clock.
     * @param deadlineNanos when the wait ends
     * @param interruptible whether an interrupt ends it
     * @return the wait
     */
    public static Wait until(long deadlineNanos, boolean interruptible) {
        return new Wait(true, deadlineNanos, interruptible);
    }

    /** @return whether the wait has a deadline */
    public boolean isTimed() {
        return this.timed;
    }

    /** @return whether an interrupt ends the wait */
    public boolean isInterruptible() {
        return this.interruptible;
    }

    /** @return the deadline on the {@link System#nanoTime()} clock; meaningless for an untimed wait */
    public long deadlineNanos() {
        return this.deadlineNanos;
    }

    /** @return nanoseconds left, zero or negative once over, {@link Long#MAX_VALUE} if untimed */
    public long remainingNanos() {
        return this.timed ? this.deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    /** @return whether the deadline has passed (never for an untimed wait) */
    public boolean isOver() {
        return this.timed && this.deadlineNanos - System.nanoTime() <= 0;
    }

    /**
     * A wait for one step of this one: it ends at this wait's deadline or {@code nanos} from now,
     * whichever comes first, and treats interrupts the same way.
     * @param nanos the longest the step may take
     * @return the bounded wait
     */
    public Wait atMost(long nanos) {
        long bound = Math.max(0, nanos);
        // Compared as durations: a deadline near Long.MAX_VALUE nanoseconds away would overflow.
        if (this.timed && remainingNanos() <= bound) {
            return new Wait(true, this.deadlineNanos, this.interruptible);
        }
        return new Wait(true, System.nanoTime() + Math.min(bound, MAX_STEP_NANOS), this.interruptible);
    }

    /**
     * The same deadline with other interrupt handling.
     * @param interruptible whether an interrupt ends the returned wait
     * @return the wait
     */
    public Wait interruptible(boolean interruptible) {
        return new Wait(this.timed, this.deadlineNanos, interruptible);
    }

    /**
     * Runs a blocking step with the time left. If an uninterruptible wait is interrupted, the step
     * runs again with what is then left, and the interrupt status is set again when it returns.
     * @param step the blocking step; it gets the nanoseconds left ({@link Long#MAX_VALUE} if untimed)
     * @param <T> what the step returns
     * @param <E> what the step throws
     * @return what the step returned
     * @throws E what the step threw
     * @throws InterruptedException only if this wait is interruptible and was interrupted
     */
    public <T extends @Nullable Object, E extends Exception> T block(Step<T, E> step) throws E, InterruptedException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return step.run(remainingNanos());
                }
                catch (InterruptedException ex) {
                    if (this.interruptible) {
                        throw ex;
                    }
                    interrupted = true;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Sleeps for {@code nanos}, or until the deadline if that comes first.
     * @param nanos how long to pause
     * @throws InterruptedException if this wait is interruptible and was interrupted
     */
    public void pause(long nanos) throws InterruptedException {
        long until = System.nanoTime() + Math.max(0, Math.min(nanos, remainingNanos()));
        block(remaining -> {
            TimeUnit.NANOSECONDS.sleep(until - System.nanoTime());
            return null;
        });
    }

    /**
     * Acquires {@code lock} within this wait. A timed wait first tries to barge into a free lock
     * (so a wait that is already over still gets it when it is free), then waits its turn.
     * @param lock the local lock
     * @return whether the lock was acquired
     * @throws InterruptedException if this wait is interruptible and was interrupted
     */
    public boolean lock(Lock lock) throws InterruptedException {
        if (!this.timed) {
            if (this.interruptible) {
                lock.lockInterruptibly();
            }
            else {
                lock.lock();
            }
            return true;
        }
        // tryLock() ignores a pending interrupt, which a try-once of an uninterruptible wait must not throw.
        if (lock.tryLock()) {
            return true;
        }
        return !isOver() && block(remaining -> remaining > 0 && lock.tryLock(remaining, TimeUnit.NANOSECONDS));
    }

    @Override
    public String toString() {
        String kind = this.interruptible ? "interruptible" : "uninterruptible";
        return this.timed ? "Wait[" + kind + ", " + TimeUnit.NANOSECONDS.toMillis(remainingNanos()) + " ms left]"
                : "Wait[" + kind + ", untimed]";
    }

    /**
     * One blocking step of a wait.
     * @param <T> what it returns
     * @param <E> what it throws besides {@link InterruptedException}
     */
    @FunctionalInterface
    public interface Step<T extends @Nullable Object, E extends Exception> {

        /**
         * Blocks for at most {@code remainingNanos}.
         * @param remainingNanos the time left ({@link Long#MAX_VALUE} if the wait is untimed)
         * @return the step's result
         * @throws E the step's failure
         * @throws InterruptedException if the thread was interrupted while blocking
         */
        T run(long remainingNanos) throws E, InterruptedException;
    }
}
