package io.github.distlock.etcd;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One etcd lease and its keep-alive: every queue entry of a registry is attached to the lease of
 * its current session, so a crashed process frees its locks within one TTL.
 *
 * <p>Invariant: the session considers itself alive only until {@code expiresAtNanos}, the send
 * time of the latest acknowledged keep-alive plus the TTL etcd granted. etcd refreshed the lease
 * after that request was sent, so the server's expiry is never earlier than ours: when
 * {@link #isAlive()} is true, the lease is alive on the server too (clock drift aside). The check
 * reads the monotonic clock, so it holds even when the scheduler thread is starved or etcd is
 * unreachable. Every keep-alive is timed from the send time of the latest acknowledged one (the
 * first from the grant's), never from when an answer arrived, so a slow answer cannot use up the TTL.
 *
 * <p>The TTL is the one etcd granted, which may exceed the requested one (etcd's minimum follows
 * from its election timeout). The scheduler runs only session timing: keep-alive sends and expiry
 * checks, all non-blocking, so nothing else a registry or an application does can delay them.
 */
final class EtcdSession {

    private static final Logger logger = LoggerFactory.getLogger(EtcdSession.class);

    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private static final long REVOKE_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Lease leases;

    private final LeaseKeepAlives keepAlives;

    private final long leaseId;

    private final long ttlNanos;

    private final long requestTimeoutNanos;

    private final ScheduledExecutorService scheduler;

    private final RaftTerms terms;

    private final BackendFailures failures;

    private final CompletableFuture<String> ended = new CompletableFuture<>();

    private volatile long expiresAtNanos;

    /** Orders the updates of {@link #expiresAtNanos}; never held while calling out. */
    private final ReentrantLock deadline = new ReentrantLock();

    private EtcdSession(Lease leases, LeaseKeepAlives keepAlives, long leaseId, long ttlNanos, long grantSentNanos,
            long requestTimeoutNanos, ScheduledExecutorService scheduler, RaftTerms terms, BackendFailures failures) {
        this.leases = leases;
        this.keepAlives = keepAlives;
        this.leaseId = leaseId;
        this.ttlNanos = ttlNanos;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.scheduler = scheduler;
        this.terms = terms;
        this.failures = failures;
        this.expiresAtNanos = grantSentNanos + ttlNanos;
    }

    /**
     * Grants a lease and starts keeping it alive.
     * @param grantWait bounds the grant
     * @throws StoreUnavailableException if the grant failed, or etcd answered it so late that the
     * lease may already have expired (the lease is then revoked in the background)
     */
    static EtcdSession start(Lease leases, LeaseKeepAlives keepAlives, long ttlSeconds, long requestTimeoutNanos,
            ScheduledExecutorService scheduler, RaftTerms terms, BackendFailures failures, Wait grantWait)
            throws StoreUnavailableException, InterruptedException {
        long sent = System.nanoTime();
        LeaseGrantResponse grant = EtcdCalls.await(leases.grant(ttlSeconds), grantWait, "lease grant");
        terms.observe(grant);
        long leaseId = grant.getID();
        EtcdSession session = new EtcdSession(leases, keepAlives, leaseId, TimeUnit.SECONDS.toNanos(grant.getTTL()),
                sent, requestTimeoutNanos, scheduler, terms, failures);
        if (!session.isAlive()) {
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            session.abandon("the lease grant was answered after its TTL");
            throw new StoreUnavailableException("etcd answered the lease grant after " + tookMillis
                    + " ms, later than the " + grant.getTTL() + "s TTL it granted", null);
        }
        session.scheduleKeepAlive(sent + session.keepAliveIntervalNanos() - System.nanoTime());
        session.scheduleExpiryCheck();
        logger.debug("Started session lease {} with TTL {}s", Long.toHexString(leaseId), grant.getTTL());
        return session;
    }

    long leaseId() {
        return this.leaseId;
    }

    /** The TTL etcd granted, which may exceed the one requested. */
    Duration grantedTtl() {
        return Duration.ofNanos(this.ttlNanos);
    }

    /** @return whether the lease is known to be alive on the server right now */
    boolean isAlive() {
        return !this.ended.isDone() && System.nanoTime() - this.expiresAtNanos < 0;
    }

    /** How long ago the latest acknowledged keep-alive (or the grant) was sent. */
    Duration sinceLastRenewal() {
        return Duration.ofNanos(System.nanoTime() - (this.expiresAtNanos - this.ttlNanos));
    }

    /** Completes with the reason once the session is lost or closed; never completes otherwise. */
    CompletableFuture<String> ended() {
        return this.ended;
    }

    /** Reason the session ended, or {@code null} while it is alive. */
    @Nullable String endReason() {
        if (this.ended.isDone()) {
            return this.ended.getNow(null);
        }
        return isAlive() ? null : "no keep-alive acknowledged by etcd within the lease TTL";
    }

    /**
     * Ends the session and revokes its lease, which deletes every key attached to it. Waits at
     * most the request timeout for the revoke.
     */
    void close(String reason) {
        end(reason);
        try {
            EtcdCalls.awaitUninterruptibly(this.leases.revoke(this.leaseId), this.requestTimeoutNanos, "lease revoke");
        }
        catch (StoreUnavailableException ex) {
            if (EtcdCalls.isLeaseNotFound(ex)) {
                return;
            }
            logger.warn("Could not revoke lease {} ({}); its keys expire with the lease TTL",
                    Long.toHexString(this.leaseId), ex.getMessage());
        }
    }

    /**
     * Ends the session after a loss and revokes the lease in the background, in case etcd still has
     * it: retried until etcd confirms, so that a keep-alive that was held up in the network and
     * renews the lease late cannot keep its entries alive.
     */
    void abandon(String reason) {
        if (end(reason)) {
            // Past a few TTLs without keep-alives etcd has let the lease expire anyway.
            revokeUntilGone(System.nanoTime() + 3 * this.ttlNanos + this.requestTimeoutNanos);
        }
    }

    private void revokeUntilGone(long giveUpAtNanos) {
        this.leases.revoke(this.leaseId)
            .orTimeout(this.requestTimeoutNanos, TimeUnit.NANOSECONDS)
            .whenComplete((revoked, failure) -> {
                if (failure != null && !EtcdCalls.isLeaseNotFound(failure)
                        && System.nanoTime() + REVOKE_RETRY_NANOS - giveUpAtNanos < 0) {
                    try {
                        this.scheduler.schedule(() -> revokeUntilGone(giveUpAtNanos), REVOKE_RETRY_NANOS,
                                TimeUnit.NANOSECONDS);
                    }
                    catch (RejectedExecutionException ex) {
                        // The registry closed: its lease expires within the TTL.
                    }
                }
            });
    }

    private boolean end(String reason) {
        boolean first = this.ended.complete(reason);
        if (first) {
            logger.debug("Session lease {} ended: {}", Long.toHexString(this.leaseId), reason);
        }
        return first;
    }

    private long keepAliveIntervalNanos() {
        return Math.max(MIN_RETRY_NANOS, this.ttlNanos / 3);
    }

    private void scheduleKeepAlive(long delayNanos) {
        if (!this.ended.isDone()) {
            try {
                this.scheduler.schedule(this::keepAlive, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            }
            catch (RejectedExecutionException ex) {
                // The registry shut its scheduler down: it is closing this session.
                end("the lock registry was closed");
            }
        }
    }

    private void keepAlive() {
        if (this.ended.isDone()) {
            return;
        }
        long sent = System.nanoTime();
        // A hung attempt must not use up the TTL: it ends after one interval, and the next one follows.
        long attemptTimeout = Math.min(this.requestTimeoutNanos, keepAliveIntervalNanos());
        CompletableFuture<LeaseKeepAlives.Renewal> call;
        try {
            call = this.keepAlives.keepAliveOnce(this.leaseId, attemptTimeout);
        }
        catch (RuntimeException ex) {
            onKeepAliveFailed(ex);
            return;
        }
        call.whenComplete((renewal, failure) -> {
            if (failure == null && this.terms.isStale(renewal.raftTerm())) {
                onKeepAliveFailed(new IllegalStateException("answered by a deposed leader (raft term "
                        + renewal.raftTerm() + ")"));
            }
            else if (failure == null) {
                onKeepAliveAcknowledged(sent, renewal.ttlSeconds());
            }
            else if (EtcdCalls.isLeaseNotFound(failure)) {
                abandon("etcd no longer knows the session lease (expired or revoked)");
            }
            else {
                onKeepAliveFailed(failure);
            }
        });
    }

    private void onKeepAliveAcknowledged(long sentNanos, long grantedTtlSeconds) {
        long expiresAt = sentNanos + TimeUnit.SECONDS.toNanos(grantedTtlSeconds);
        boolean expired;
        this.deadline.lock();
        try {
            // Once the deadline has passed, holds were reported lost: a late answer must not revive them.
            expired = System.nanoTime() - this.expiresAtNanos >= 0;
            // Only move forward: an answer that overtook a later one must not shorten the deadline.
            if (!expired && expiresAt - this.expiresAtNanos > 0) {
                this.expiresAtNanos = expiresAt;
            }
        }
        finally {
            this.deadline.unlock();
        }
        if (expired) {
            // Outside the lock: ending the session runs its listeners (lost holds, events, metrics).
            abandon("no keep-alive acknowledged by etcd within the lease TTL");
            return;
        }
        // Timed from when this keep-alive was sent, not from when its answer arrived.
        scheduleKeepAlive(sentNanos + keepAliveIntervalNanos() - System.nanoTime());
    }

    private void onKeepAliveFailed(Throwable failure) {
        if (this.ended.isDone()) {
            return;
        }
        this.failures.record();
        long remaining = this.expiresAtNanos - System.nanoTime();
        logger.debug("Keep-alive of lease {} failed ({}), {} ms left", Long.toHexString(this.leaseId),
                EtcdCalls.describe(failure), TimeUnit.NANOSECONDS.toMillis(remaining));
        scheduleKeepAlive(Math.min(keepAliveIntervalNanos(), MIN_RETRY_NANOS * 2));
    }

    private void scheduleExpiryCheck() {
        long delay = this.expiresAtNanos - System.nanoTime();
        if (this.ended.isDone() || this.scheduler.isShutdown()) {
            return;
        }
        try {
            this.scheduler.schedule(() -> {
                if (this.ended.isDone()) {
                    return;
                }
                if (System.nanoTime() - this.expiresAtNanos >= 0) {
                    abandon("no keep-alive acknowledged by etcd within the "
                            + TimeUnit.NANOSECONDS.toSeconds(this.ttlNanos) + "s lease TTL");
                }
                else {
                    scheduleExpiryCheck();
                }
            }, Math.max(0, delay), TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Shut down since the look above: the registry is closing this session, as for a keep-alive.
            end("the lock registry was closed");
        }
    }
}
