package io.github.distlock.store;

/**
 * What a store counts into its registry's {@link io.github.distlock.LockStatistics}; the core
 * counts acquisitions and losses itself.
 */
public interface StoreEvents {

    /** Counts a session lost (for etcd, a lease whose keep-alive etcd did not acknowledge within the TTL). */
    void sessionLost();

    /** Counts a store request that failed or timed out: an acquisition, release, keep-alive or background delete. */
    void backendError();
}
