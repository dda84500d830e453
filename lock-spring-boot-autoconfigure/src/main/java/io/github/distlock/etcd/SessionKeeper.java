package io.github.distlock.etcd;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.Client;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registry's current {@link EtcdSession} and the queue entries written under its sessions:
 * starts a new session when the last one was lost, and tells the entries of a session that ended.
 *
 * <p>Invariant: an entry is registered before its key is written and unregistered only after it
 * gave up or was released, so every key under a live session lease that no registered entry owns
 * is a ghost that may be deleted.
 */
final class SessionKeeper {

    private static final Logger logger = LoggerFactory.getLogger(SessionKeeper.class);

    private final Client client;

    private final long leaseTtlSeconds;

    private final long requestTimeoutNanos;

    private final ScheduledExecutorService sessionScheduler;

    private final LeaseKeepAlives keepAlives;

    private final RaftTerms terms;

    private final StoreEvents statistics;

    private final BackendFailures failures;

    private final Set<QueueEntry> entries = ConcurrentHashMap.newKeySet();

    private final ReentrantLock sessionLock = new ReentrantLock();

    /**
     * Orders publishing a new session against {@link #close}, which must not wait for a grant in
     * progress (that is {@link #sessionLock}). Not a monitor, as no lock on the acquisition path is:
     * contending for a monitor pins a virtual thread's carrier on JDK 21 to 23.
     */
    private final ReentrantLock publication = new ReentrantLock();

    /** {@code null} before the first grant. */
    private volatile @Nullable EtcdSession session;

    /** The granted TTL last reported as differing from the requested one, so it is reported once. */
    private volatile @Nullable Duration reportedGrantedTtl;

    private volatile boolean closed;

    /**
     * @param sessionScheduler runs only session timing (keep-alives, expiry checks), never anything
     * that can block
     */
    SessionKeeper(Client client, long leaseTtlSeconds, long requestTimeoutNanos,
            ScheduledExecutorService sessionScheduler, RaftTerms terms, StoreEvents statistics,
            BackendFailures failures) {
        this.client = client;
        this.leaseTtlSeconds = leaseTtlSeconds;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.sessionScheduler = sessionScheduler;
        this.keepAlives = LeaseKeepAlives.of(client);
        this.terms = terms;
        this.statistics = statistics;
        this.failures = failures;
    }

    /** Returns a live session, granting a new lease if there is none or the last one was lost. */
    EtcdSession current(Wait attempt) throws StoreUnavailableException, InterruptedException {
        EtcdSession current = this.session;
        if (current != null && current.isAlive()) {
            return current;
        }
        // Another thread may be granting a lease right now: wait for it no longer than our budget.
        long budgetMillis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, attempt.remainingNanos()));
        if (!attempt.block(remaining -> this.sessionLock.tryLock(remaining, TimeUnit.NANOSECONDS))) {
            throw new StoreUnavailableException("lease grant by another thread did not finish within "
                    + budgetMillis + " ms", null);
        }
        try {
            current = this.session;
            if (current != null && current.isAlive()) {
                return current;
            }
            if (current != null) {
                current.abandon("no keep-alive acknowledged by etcd within the lease TTL");
            }
            if (this.closed) {
                throw new IllegalStateException("the lock registry is closed");
            }
            // No session yet, or the last one was lost: the channel may be waiting out a backoff.
            this.failures.beforeReconnect();
            EtcdSession started = EtcdSession.start(this.client.getLeaseClient(), this.keepAlives,
                    this.leaseTtlSeconds, this.requestTimeoutNanos, this.sessionScheduler, this.terms, this.failures,
                    attempt.atMost(this.requestTimeoutNanos));
            reportGrantedTtl(started.grantedTtl());
            started.ended().thenAccept(reason -> onSessionEnded(started, reason));
            boolean closedMeanwhile;
            this.publication.lock();
            try {
                closedMeanwhile = this.closed;
                if (!closedMeanwhile) {
                    this.session = started;
                }
            }
            finally {
                this.publication.unlock();
            }
            if (closedMeanwhile) {
                started.close("the lock registry was closed");
                throw new IllegalStateException("the lock registry is closed");
            }
            return started;
        }
        finally {
            this.sessionLock.unlock();
        }
    }

    /**
     * etcd grants at least its minimum TTL (derived from its election timeout, 2 s with the
     * defaults): the liveness bound of G4 is then the granted TTL, so say so once.
     */
    private void reportGrantedTtl(Duration granted) {
        if (granted.getSeconds() != this.leaseTtlSeconds && !granted.equals(this.reportedGrantedTtl)) {
            this.reportedGrantedTtl = granted;
            logger.warn("etcd granted the lock session lease a TTL of {}s instead of the configured {}s (etcd's "
                    + "minimum follows from its election timeout): a crashed holder blocks others for up to {}s, "
                    + "and holds are lost after {}s without etcd", granted.getSeconds(), this.leaseTtlSeconds,
                    granted.getSeconds(), granted.getSeconds());
        }
    }

    /** The TTL etcd granted the current session, or {@code null} before the first session. */
    @Nullable Duration grantedTtl() {
        EtcdSession current = this.session;
        return (current != null) ? current.grantedTtl() : null;
    }

    /** For tests: keep-alive calls whose stream has not ended. */
    int openKeepAliveCalls() {
        return this.keepAlives.openCalls();
    }

    /** The current session, alive or not, or {@code null} before the first grant. */
    @Nullable EtcdSession currentOrNull() {
        return this.session;
    }

    /** For tests: the lease of the live session, or 0 if there is none. */
    long liveLeaseId() {
        EtcdSession current = this.session;
        return (current != null && current.isAlive()) ? current.leaseId() : 0;
    }

    /** For tests: whether some thread is granting a lease right now. */
    boolean grantInProgress() {
        return this.sessionLock.isLocked();
    }

    void register(QueueEntry entry) {
        this.entries.add(entry);
    }

    void unregister(QueueEntry entry) {
        this.entries.remove(entry);
    }

    Iterable<QueueEntry> entries() {
        return this.entries;
    }

    boolean isClosed() {
        return this.closed;
    }

    /**
     * Ends every entry and revokes the current lease, which deletes every entry in etcd. A lease
     * being granted meanwhile is revoked by the thread granting it, so no lease outlives the
     * registry.
     */
    void close(String reason) {
        EtcdSession current;
        // With the publication in current(): a lease granted while closing is revoked by its
        // granter, so close never waits for a grant in progress.
        this.publication.lock();
        try {
            this.closed = true;
            current = this.session;
        }
        finally {
            this.publication.unlock();
        }
        for (QueueEntry entry : this.entries) {
            entry.sessionEnded(reason);
        }
        if (current != null) {
            current.close(reason);
        }
    }

    private void onSessionEnded(EtcdSession ended, String reason) {
        if (!this.closed) {
            this.statistics.sessionLost();
            logger.warn("etcd session lease {} ended: {}; its locks are lost", Long.toHexString(ended.leaseId()),
                    reason);
        }
        for (QueueEntry entry : this.entries) {
            if (entry.session() == ended) {
                entry.sessionEnded(reason);
            }
        }
    }
}
