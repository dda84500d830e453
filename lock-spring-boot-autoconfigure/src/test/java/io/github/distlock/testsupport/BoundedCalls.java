package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Assertions that a lock call ends within its bound while the store is down or frozen (G10). */
public final class BoundedCalls {

    private BoundedCalls() {
    }

    /**
     * A try-lock of one second ends within its bound while the store is down or frozen: false or an
     * exception that says the store is unavailable.
     */
    public static void assertBoundedWhileDown(FencedLock lock) {
        long start = System.nanoTime();
        Object outcome;
        try {
            outcome = lock.tryLock(1, TimeUnit.SECONDS);
        }
        catch (Throwable ex) {
            outcome = ex;
        }
        assertThat(outcome).satisfiesAnyOf(o -> assertThat(o).isEqualTo(Boolean.FALSE),
                o -> assertThat(o).isInstanceOfSatisfying(LockAcquisitionException.class, (failure) -> assertThat(
                        failure.getReason()).isEqualTo(LockAcquisitionException.Reason.STORE_UNAVAILABLE)));
        // The bound is 1 s; allow a loaded machine 2 s more, far below a hang.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    /**
     * A timed wait that ends while the store is frozen returns at its timeout (#36, point 9): what its
     * give-up leaves in the store is removed in the background once the store answers, not waited for
     * past the wait. Before, a give-up waited up to half a second more for its removal's confirmation,
     * so on a frozen store it always returned at least that late: the bound below. The best of three
     * rounds counts, so that one stall of a loaded machine does not fail the test.
     * @param waiting a lock of a key another process holds, with a request timeout of at least 2 s
     * @param queued whether the waiter's entry is written and waits behind the holder
     * @param gone whether the waiter's entry was removed (once the store answers again)
     * @param freeze freezes the store
     * @param thaw lets it run again
     */
    public static void assertAGiveUpReturnsAtItsTimeoutWhileFrozen(FencedLock waiting, BooleanSupplier queued,
            BooleanSupplier gone, Runnable freeze, Runnable thaw) throws Exception {
        Duration timeout = Duration.ofSeconds(2);
        Duration best = null;
        for (int round = 0; round < 3 && (best == null || best.compareTo(timeout.plusMillis(500)) >= 0); round++) {
            CompletableFuture<Duration> took = CompletableFuture.supplyAsync(() -> timedTry(waiting, timeout));
            await().atMost(Duration.ofSeconds(30)).until(queued::getAsBoolean);
            freeze.run();
            Duration elapsed;
            try {
                elapsed = took.get(30, TimeUnit.SECONDS);
            }
            finally {
                thaw.run();
            }
            await().atMost(Duration.ofSeconds(30)).until(gone::getAsBoolean);
            best = (best == null || elapsed.compareTo(best) < 0) ? elapsed : best;
        }
        assertThat(best).as("time the timed wait took on a frozen store, best of up to three rounds")
            .isLessThan(timeout.plusMillis(500));
    }

    private static Duration timedTry(FencedLock waiting, Duration timeout) {
        long start = System.nanoTime();
        try {
            if (waiting.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                waiting.unlock();
                throw new AssertionError("acquired a lock another process holds");
            }
        }
        catch (LockAcquisitionException ex) {
            // The store failed while the wait ended: as bounded as a timeout.
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
