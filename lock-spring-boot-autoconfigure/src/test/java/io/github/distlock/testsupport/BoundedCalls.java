package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;

import static org.assertj.core.api.Assertions.assertThat;

/** Assertions that a lock call ends within its bound while the store is down or frozen (G10). */
public final class BoundedCalls {

    private BoundedCalls() {
    }

    /** A try-lock of one second ends within its bound while the store is down or frozen: false or an exception. */
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
                o -> assertThat(o).isInstanceOf(LockAcquisitionException.class));
        // The bound is 1 s; allow a loaded machine 2 s more, far below a hang.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }
}
