package io.github.distlock.etcd;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.core.LockStatistics;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.LeaseOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.github.distlock.core.Wait;
import io.github.distlock.store.StoreUnavailableException;

/**
 * A registry's current {@link EtcdSession} and the queue entries written under its sessions:
 * starts a new session when the last one was lost, tells the entries of a session that ended, and
 * sweeps the lease for entries nobody owns.
 *
 * <p>Invariant: an entry is registered before its key is written and unregistered only after it
 * gave up or was released, so every key under a live session lease that no registered entry owns
 * is a ghost that may be deleted.
 */
final class SessionKeeper {

    private static final Logger logger = LoggerFactory.getLogger(SessionKeeper.class);

    private static final long GHOST_SWEEP_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final long GHOST_SWEEP_PERIOD_MILLIS = 1_000;

    private final Client client;

    private final EtcdKeyspace keyspace;

    private final long leaseTtlSeconds;

    private final long requestTimeoutNanos;

    private final ScheduledExecutorService sessionScheduler;

    private final ScheduledExecutorService maintenance;

    private final LeaseKeepAlives keepAlives;

    private final RaftTerms terms;

    private final LockStatistics statistics;

    private final BackendFailures failures;

    private final Set<QueueEntry> entries = ConcurrentHashMap.newKeySet();

    private final ReentrantLock sessionLock = new ReentrantLock();

    private final AtomicBoolean ghostSweepScheduled = new AtomicBoolean();

    private volatile EtcdSession session;

    private volatile long sweepGhostsUntilNanos;

    /** The granted TTL last reported as differing from the requested one, so it is reported once. */
    private volatile Duration reportedGrantedTtl;

    private volatile boolean closed;

    /**
     * @param sessionScheduler runs only session timing (keep-alives, expiry checks), never anything
     * that can block
     * @param maintenance runs clean-up such as ghost sweeps
     */
    SessionKeeper(Client client, EtcdKeyspace keyspace, long leaseTtlSeconds, long requestTimeoutNanos,
            ScheduledExecutorService sessionScheduler, ScheduledExecutorService maintenance, RaftTerms terms,
            LockStatistics statistics, BackendFailures failures) {
        this.client = client;
        this.keyspace = keyspace;
        this.leaseTtlSeconds = leaseTtlSeconds;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.sessionScheduler = sessionScheduler;
        this.maintenance = maintenance;
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
            synchronized (this.entries) {
                closedMeanwhile = this.closed;
                if (!closedMeanwhile) {
                    this.session = started;
                }
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
    Duration grantedTtl() {
        EtcdSession current = this.session;
        return (current != null) ? current.grantedTtl() : null;
    }

    /** For tests: keep-alive calls whose stream has not ended. */
    int openKeepAliveCalls() {
        return this.keepAlives.openCalls();
    }

    /** The current session, alive or not, or {@code null} before the first grant. */
    EtcdSession currentOrNull() {
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

    /** Tolerates {@code null}: an acquisition may fail before its entry exists. */
    void unregister(QueueEntry entry) {
        if (entry != null) {
            this.entries.remove(entry);
        }
    }

    Iterable<QueueEntry> entries() {
        return this.entries;
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
        synchronized (this.entries) {
            this.closed = true;
            current = this.session;
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

    /**
     * Deletes entries under the session lease that no acquisition owns: writes whose answer was
     * lost and that etcd applied after the acquisition had given up and deleted its key (for
     * example a deposed leader's proposal committed by its successor). Such a ghost would block
     * the queue for as long as the session lives. Runs every second for a minute after each
     * uncertain write; one lease read per run.
     */
    void sweepForGhosts() {
        this.sweepGhostsUntilNanos = System.nanoTime() + GHOST_SWEEP_WINDOW_NANOS;
        if (this.ghostSweepScheduled.compareAndSet(false, true)) {
            scheduleGhostSweep();
        }
    }

    private void scheduleGhostSweep() {
        try {
            this.maintenance.schedule(this::sweepGhostsOnce, GHOST_SWEEP_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed: revoking the lease removed every entry.
        }
    }

    private void sweepGhostsOnce() {
        EtcdSession current = this.session;
        CompletableFuture<?> sweep = (current != null && current.isAlive() && !this.closed)
                ? this.client.getLeaseClient()
                    .timeToLive(current.leaseId(), LeaseOption.builder().withAttachedKeys().build())
                    .orTimeout(this.requestTimeoutNanos, TimeUnit.NANOSECONDS)
                    .thenAccept(lease -> deleteUnowned(lease.getKeys()))
                : CompletableFuture.completedFuture(null);
        sweep.whenComplete((done, failure) -> {
            if (sweepWanted()) {
                scheduleGhostSweep();
                return;
            }
            this.ghostSweepScheduled.set(false);
            // An uncertain write may have come between the check and the reset.
            if (sweepWanted() && this.ghostSweepScheduled.compareAndSet(false, true)) {
                scheduleGhostSweep();
            }
        });
    }

    private boolean sweepWanted() {
        return !this.closed && System.nanoTime() - this.sweepGhostsUntilNanos < 0;
    }

    private void deleteUnowned(List<ByteSequence> leaseKeys) {
        Set<ByteSequence> registered = new HashSet<>();
        for (QueueEntry entry : this.entries) {
            registered.add(entry.key());
        }
        for (ByteSequence key : leaseKeys) {
            if (this.keyspace.rootOf(key) != null && !registered.contains(key)) {
                this.client.getKVClient().get(key).thenAccept(found -> {
                    for (KeyValue kv : found.getKvs()) {
                        deleteIfStillUnowned(kv);
                    }
                });
            }
        }
    }

    /**
     * Entries register before they write, so an entry that owns this key and revision is
     * registered by the time the read saw it; the delete compares the revision, so it can never
     * remove a newer entry that reuses the key.
     */
    private void deleteIfStillUnowned(KeyValue kv) {
        if (isOwned(kv.getKey(), kv.getCreateRevision())) {
            return;
        }
        logger.warn("Deleting orphaned lock entry {}: its write was applied after its acquisition gave up",
                EtcdKeyspace.text(kv.getKey()));
        this.client.getKVClient().txn()
            .If(new Cmp(kv.getKey(), Cmp.Op.EQUAL, CmpTarget.createRevision(kv.getCreateRevision())))
            .Then(Op.delete(kv.getKey(), DeleteOption.DEFAULT))
            .commit();
    }

    /** Whether a registered entry wrote (or is writing) {@code key} at {@code createRevision}. */
    private boolean isOwned(ByteSequence key, long createRevision) {
        for (QueueEntry entry : this.entries) {
            if (entry.key().equals(key) && (entry.fence() == createRevision || entry.fence() < 0)) {
                return true;
            }
        }
        return false;
    }
}
