package io.github.distlock.nemesis;

import java.util.Locale;

/**
 * A broken rule, with what is needed to find it in the history: the key, when, and in the detail
 * the op ids, fences, workers and times (seconds since the history's first event).
 *
 * @param kind which rule
 * @param key the lock key, or null for a rule about the whole run
 * @param at when the violation shows, in {@link System#nanoTime()} nanoseconds
 * @param detail what happened, for humans
 */
public record Violation(Kind kind, String key, long at, String detail) {

    @Override
    public String toString() {
        return this.kind.label() + ((this.key != null) ? " '" + this.key + "'" : "") + ": " + this.detail;
    }

    /** The rules, one kind of violation each. */
    public enum Kind {
        /** Two holds of a key overlapped with no fault that could end the older one behind its back. */
        MUTUAL_EXCLUSION,
        /** Holds overlapped during such a fault, and the older holder was not told in time. */
        LATE_LOSS_REPORT,
        /** A fence was not above every earlier fence of its key while the store kept its data. */
        FENCE_ORDER,
        /** A hold's write was rejected, or its unlock threw {@code LockLostException}, and nothing reported it lost. */
        SILENT_LOSS,
        /** A timed call answered later than its timeout plus the overrun bound. */
        WAIT_OVERRUN,
        /** A request of a live worker never answered, or a hold was never released. */
        HANG,
        /** A fair waiter was served after one that started waiting after it, outside fault windows. */
        FAIR_ORDER,
        /** A key was not acquired within TTL plus election time after the last fault healed. */
        NO_RECOVERY,
        /** The store kept entries or sessions after the workers exited, or nobody looked. */
        GHOST;

        /** @return the report's name for it, as {@code mutual-exclusion} */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }
}
