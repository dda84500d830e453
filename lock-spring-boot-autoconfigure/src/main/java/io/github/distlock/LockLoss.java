package io.github.distlock;

import java.util.Objects;

/**
 * Holds of one lock, in this process, that the store may have stopped backing before they ended:
 * work done under them may have overlapped another holder's, and a resource that checks fences
 * may have rejected or must reject it. One report names either the one hold a thread still has
 * (its {@code unlock()} throws {@link LockLostException} too), or holds already unlocked, whose
 * threads were told nothing at unlock, so this report is how they learn it: holds passed on
 * between this process's threads (see {@link LocalHandoff}) and unlocked after the store last
 * confirmed their entry, which it lost since, or holds whose release the store did not confirm.
 * Their fences are consecutive, from {@link #firstFence()} to {@link #lastFence()}.
 *
 * @param key the lock key
 * @param firstFence the fence of the first hold lost
 * @param lastFence the fence of the last hold lost, equal to {@code firstFence} for one hold
 * @param holds how many holds: {@code lastFence - firstFence + 1}
 * @param unlocked whether their threads had already unlocked them: then no exception told them
 * @param reason why the store no longer had the entry
 */
public record LockLoss(String key, long firstFence, long lastFence, int holds, boolean unlocked, String reason) {

    /**
     * @throws IllegalArgumentException if the fences do not span {@code holds} holds
     */
    public LockLoss {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reason, "reason");
        if (holds < 1 || lastFence - firstFence + 1 != holds) {
            throw new IllegalArgumentException("Fences " + firstFence + ".." + lastFence + " do not span " + holds
                    + " holds");
        }
    }

    /**
     * @param fence a fence of this lock
     * @return whether the hold with that fence is among the lost ones
     */
    public boolean covers(long fence) {
        return fence >= this.firstFence && fence <= this.lastFence;
    }
}
