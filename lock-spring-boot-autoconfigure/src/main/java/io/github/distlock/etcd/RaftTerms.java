package io.github.distlock.etcd;

import java.util.concurrent.atomic.AtomicLong;

import io.etcd.jetcd.Response;

/**
 * The highest raft term seen in any etcd response of a registry.
 *
 * <p>A keep-alive answered with an older term comes from a deposed leader that does not know it
 * yet (for example one that was frozen and has just resumed). etcd before 3.4.28 lets such a
 * member renew a lease in its own books while the real leader lets it expire (etcd issue 15247),
 * so the session must not count that answer as a renewal.
 */
final class RaftTerms {

    private final AtomicLong highest = new AtomicLong();

    void observe(Response response) {
        long term = response.getHeader().getRaftTerm();
        this.highest.accumulateAndGet(term, Math::max);
    }

    /** Records an answer's term; @return whether an earlier answer came from a later term. */
    boolean isStale(long term) {
        return this.highest.getAndAccumulate(term, Math::max) > term;
    }
}
