package io.github.distlock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A lock could not be acquired: the backend failed or could not be reached while acquiring, or (in
 * callers that turn a timeout into an error, such as the {@code @DistributedLock} aspect) the wait
 * timed out. The message names the key (a long one abbreviated, see {@link KeyAbbreviation};
 * {@link #getKey()} returns it whole), how long the caller waited and, where known, who holds the
 * lock.
 */
public class LockAcquisitionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final Reason reason;

    private final String key;

    private final Duration waited;

    private final @Nullable String holder;

    /**
     * Creates an exception whose reason follows from its cause: {@link Reason#STORE_UNAVAILABLE}
     * with one, {@link Reason#TIMED_OUT} without.
     * @param key the lock key
     * @param waited how long the caller waited before giving up (not {@code null})
     * @param holder who held the lock, or {@code null} if unknown
     * @param message what went wrong
     * @param cause the backend failure, or {@code null}
     */
    public LockAcquisitionException(String key, Duration waited, @Nullable String holder, String message,
            @Nullable Throwable cause) {
        this((cause != null) ? Reason.STORE_UNAVAILABLE : Reason.TIMED_OUT, key, waited, holder, message, cause);
    }

    /**
     * Creates an exception.
     * @param reason why the lock could not be had
     * @param key the lock key
     * @param waited how long the caller waited before giving up (not {@code null})
     * @param holder who held the lock, or {@code null} if unknown
     * @param message what went wrong
     * @param cause the backend failure, or {@code null}
     */
    public LockAcquisitionException(Reason reason, String key, Duration waited, @Nullable String holder,
            String message, @Nullable Throwable cause) {
        super(describe(key, waited, holder, message), cause);
        this.reason = reason;
        this.key = key;
        this.waited = waited;
        this.holder = holder;
    }

    private static String describe(String key, Duration waited, @Nullable String holder, String message) {
        StringBuilder text = new StringBuilder("Could not acquire lock '").append(KeyAbbreviation.abbreviate(key))
            .append("' after ").append(waited.toMillis()).append(" ms: ").append(message);
        if (holder != null) {
            text.append(" (held by ").append(holder).append(')');
        }
        return text.toString();
    }

    /** @return why the lock could not be had: what a caller (an HTTP status, a retry) can act on */
    public Reason getReason() {
        return this.reason;
    }

    /** @return the lock key, whole (the message abbreviates a long one) */
    public String getKey() {
        return this.key;
    }

    /** @return how long the caller waited */
    public Duration getWaited() {
        return this.waited;
    }

    /** @return who held the lock when the caller gave up, or {@code null} if unknown */
    public @Nullable String getHolder() {
        return this.holder;
    }

    /** Why a lock could not be had. */
    public enum Reason {

        /** Another owner held the lock for the caller's whole wait timeout: try again later. */
        TIMED_OUT,

        /** The lock store failed or could not be reached for the whole wait (or one request timeout). */
        STORE_UNAVAILABLE,

        /** The waiting thread was interrupted, as on shutdown. */
        INTERRUPTED,

        /** The lock registry was closed, as on shutdown. */
        REGISTRY_CLOSED
    }
}
