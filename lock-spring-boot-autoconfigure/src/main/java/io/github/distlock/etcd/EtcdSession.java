package io.github.distlock.etcd;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
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
 * unreachable.
 */
final class EtcdSession {

    private static final Logger logger = LoggerFactory.getLogger(EtcdSession.class);

    private static final long MIN_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final Lease leases;

    private final long leaseId;

    private final long ttlNanos;

    private final long requestTimeoutNanos;

    private final ScheduledExecutorService scheduler;

    private final RaftTerms terms;

    private final BackendFailures failures;

    private final CompletableFuture<String> ended = new CompletableFuture<>();

    private volatile long expiresAtNanos;

    private EtcdSession(Lease leases, long leaseId, long ttlNanos, long grantSentNanos, long requestTimeoutNanos,
            ScheduledExecutorService scheduler, RaftTerms terms, BackendFailures failures) {
        this.leases = leases;
        this.leaseId = leaseId;
        this.ttlNanos = ttlNanos;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.scheduler = scheduler;
        this.terms = terms;
        this.failures = failures;
        this.expiresAtNanos = grantSentNanos + ttlNanos;
    }

    /** Grants a lease and starts keeping it alive. */
    static EtcdSession start(Lease leases, long ttlSeconds, long requestTimeoutNanos, ScheduledExecutorService scheduler,
            RaftTerms terms, BackendFailures failures, boolean interruptible)
            throws EtcdCallFailedException, InterruptedException {
        long sent = System.nanoTime();
        LeaseGrantResponse grant = EtcdCalls.await(leases.grant(ttlSeconds), requestTimeoutNanos, interruptible,
                "lease grant");
        terms.observe(grant);
        long leaseId = grant.getID();
        EtcdSession session = new EtcdSession(leases, leaseId, TimeUnit.SECONDS.toNanos(ttlSeconds), sent,
                requestTimeoutNanos, scheduler, terms, failures);
        session.scheduleKeepAlive(session.keepAliveIntervalNanos());
        session.scheduleExpiryCheck();
        logger.debug("Started session lease {} with TTL {}s", Long.toHexString(leaseId), ttlSeconds);
        return session;
    }

    long leaseId() {
        return this.leaseId;
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
    String endReason() {
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
        catch (EtcdCallFailedException ex) {
            if (EtcdCalls.isLeaseNotFound(ex)) {
                return;
            }
            logger.warn("Could not revoke lease {} ({}); its keys expire with the lease TTL",
                    Long.toHexString(this.leaseId), ex.getMessage());
        }
    }

    /** Ends the session after a loss and revokes the lease in the background, in case etcd still has it. */
    void abandon(String reason) {
        if (end(reason)) {
            this.leases.revoke(this.leaseId);
        }
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
                this.scheduler.schedule(this::keepAlive, delayNanos, TimeUnit.NANOSECONDS);
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
        CompletableFuture<LeaseKeepAliveResponse> call;
        try {
            call = this.leases.keepAliveOnce(this.leaseId);
        }
        catch (RuntimeException ex) {
            onKeepAliveFailed(ex);
            return;
        }
        // A hung attempt must not use up the TTL: give up on it after one interval and try again.
        long attemptTimeout = Math.min(this.requestTimeoutNanos, keepAliveIntervalNanos());
        call.orTimeout(attemptTimeout, TimeUnit.NANOSECONDS).whenComplete((response, failure) -> {
            if (failure == null && this.terms.isStale(response)) {
                onKeepAliveFailed(new IllegalStateException("answered by a deposed leader (raft term "
                        + response.getHeader().getRaftTerm() + ")"));
            }
            else if (failure == null) {
                onKeepAliveAcknowledged(sent, response.getTTL());
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
        synchronized (this) {
            // Once the deadline has passed, holds were reported lost: a late answer must not revive them.
            if (System.nanoTime() - this.expiresAtNanos >= 0) {
                abandon("no keep-alive acknowledged by etcd within the lease TTL");
                return;
            }
            // Only move forward: an answer that overtook a later one must not shorten the deadline.
            if (expiresAt - this.expiresAtNanos > 0) {
                this.expiresAtNanos = expiresAt;
            }
        }
        scheduleKeepAlive(keepAliveIntervalNanos());
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
        this.scheduler.schedule(() -> {
            if (this.ended.isDone()) {
                return;
            }
            if (System.nanoTime() - this.expiresAtNanos >= 0) {
                abandon("no keep-alive acknowledged by etcd within the " + TimeUnit.NANOSECONDS.toSeconds(this.ttlNanos)
                        + "s lease TTL");
            }
            else {
                scheduleExpiryCheck();
            }
        }, Math.max(0, delay), TimeUnit.NANOSECONDS);
    }
}
