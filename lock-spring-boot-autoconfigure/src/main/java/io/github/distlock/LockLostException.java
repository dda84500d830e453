package io.github.distlock;

/**
 * A hold ended without {@code unlock()}: the session lease expired or was revoked, or the
 * holder's key was deleted. Thrown by {@code unlock()} of the lost hold. Work done under the hold
 * since it was lost may have overlapped with another holder; fencing tokens let resources reject
 * such work. The message names the key, a long one abbreviated (see {@link KeyAbbreviation});
 * {@link #getKey()} returns it whole.
 */
public class LockLostException extends IllegalMonitorStateException {

    private static final long serialVersionUID = 1L;

    private final String key;

    private final long fence;

    /**
     * Creates an exception.
     * @param key the lock key
     * @param fence the fence of the lost hold
     * @param reason why the hold ended
     */
    public LockLostException(String key, long fence, String reason) {
        super("Lock '" + KeyAbbreviation.abbreviate(key) + "' (fence " + fence + ") was lost before unlock: " + reason);
        this.key = key;
        this.fence = fence;
    }

    /** @return the lock key, whole (the message abbreviates a long one) */
    public String getKey() {
        return this.key;
    }

    /** @return the fence of the lost hold */
    public long getFence() {
        return this.fence;
    }
}
