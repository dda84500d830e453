package io.github.distlock.sample.orders;

/**
 * A write carried a fence no greater than that of a write already accepted: its writer's lock
 * had passed to someone else, who wrote newer data. Answered with 409.
 */
public class StaleFenceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long fence;

    private final long storedFence;

    public StaleFenceException(String orderId, long fence, long storedFence) {
        super("Write to order '" + orderId + "' with fence " + fence + " rejected: a write with fence " + storedFence
                + " was accepted before, so the writer's lock had passed to someone else");
        this.fence = fence;
        this.storedFence = storedFence;
    }

    /** @return the fence of the rejected write */
    public long getFence() {
        return this.fence;
    }

    /** @return the fence of the last accepted write */
    public long getStoredFence() {
        return this.storedFence;
    }
}
