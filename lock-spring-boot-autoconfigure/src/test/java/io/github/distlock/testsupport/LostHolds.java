package io.github.distlock.testsupport;

import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.core.CoreLockRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** What the holding thread must see of a hold whose session ended. */
public final class LostHolds {

    private LostHolds() {
    }

    /**
     * Asserts, on the holding thread, that {@code lock} reads as not held, that its unlock throws
     * {@link LockLostException}, and that {@code registry} counted the loss exactly once: also when
     * the unlock ends the entry before the session's loss reaches it.
     * @param lock a lock the current thread held when its session ended
     * @param registry the registry that gave out {@code lock}
     */
    public static void assertReadsAsLostAndIsCountedOnce(FencedLock lock, CoreLockRegistry<?> registry) {
        assertThat(lock.isLockedByCurrentThread()).as("held after its session was lost").isFalse();
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        assertThat(registry.getStatistics().getHoldsLost()).as("holds lost").isEqualTo(1);
    }
}
