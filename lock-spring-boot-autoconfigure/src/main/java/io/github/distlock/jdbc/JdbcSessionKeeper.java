package io.github.distlock.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's session: its row in the session table, started by {@code connect} or the first
 * acquisition, renewed every third of the TTL on renewal threads of its own. Each renewal also checks that
 * the session's entries are still there, has rows that no acquisition owns removed, and starts a
 * sweep (on the call threads, see {@link JdbcEntryRemovals#sweepLater()}). A session is lost exactly
 * when the database says its row is gone or expired or when one TTL passed since the send of its
 * last acknowledged renewal, whichever comes first; its entries are lost with it, its row is deleted
 * in the background, and the next acquisition starts a new session.
 */
final class JdbcSessionKeeper {

    private static final Logger logger = LoggerFactory.getLogger(JdbcSessionKeeper.class);

    /** After a failed renewal, the next comes this soon (or at a tenth of the TTL, if sooner). */
    private static final long FAILED_RENEWAL_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Renewals that may be in flight at once, each on a connection of its own. */
    static final int MAX_RENEWALS_IN_FLIGHT = 3;

    private final JdbcCalls calls;

    private final JdbcEntryRemovals removals;

    /** The store's scheduler: renewals and deadline checks are due there; never blocks on the database. */
    private final ScheduledExecutorService maintenance;

    private final StoreEvents statistics;

    private final String ownerIdentity;

    private final long ttlNanos;

    /**
     * How long a session counts as alive here after the send of its last acknowledged renewal: the
     * TTL less a margin, since the database stores its expiry in whole milliseconds (rounded) and
     * its clock may run a little faster than this process's (NTP slews up to 500 ppm).
     */
    private final long livenessNanos;

    private final long renewalPeriodNanos;

    /** Renewals, on threads that come and go (sweeps run on the call threads: {@link JdbcEntryRemovals#sweepLater()}). */
    private final ExecutorService renewer;

    /**
     * Renewals in flight. Invariant: a due renewal starts unless {@link #MAX_RENEWALS_IN_FLIGHT}
     * are in flight, or one started less than a quarter of the TTL ago while the next due one would
     * still leave a quarter of the TTL before the session's deadline; so a renewal stuck on a dead
     * connection (up to the network timeout, or the pool's own wait) does not keep the next from
     * renewing the session on another connection before its deadline, also when it is a retry after
     * a failure that started just before a due renewal.
     */
    private final AtomicInteger renewalsInFlight = new AtomicInteger();

    private volatile long lastRenewalStartedAt;

    private final ReentrantLock sessionStart = new ReentrantLock();

    private final ReentrantLock deadlineLock = new ReentrantLock();

    private volatile @Nullable JdbcSession session;

    private @Nullable ScheduledFuture<?> deadlineCheck;

    /** Also schedules the renewals, every third of {@code leaseTtl}. */
    JdbcSessionKeeper(JdbcCalls calls, JdbcEntryRemovals removals, ScheduledExecutorService maintenance,
            StoreEvents statistics, String ownerIdentity, Duration leaseTtl) {
        this.calls = calls;
        this.removals = removals;
        this.maintenance = maintenance;
        this.statistics = statistics;
        this.ownerIdentity = ownerIdentity;
        this.ttlNanos = leaseTtl.toNanos();
        this.livenessNanos = this.ttlNanos - Math.max(TimeUnit.MILLISECONDS.toNanos(2), this.ttlNanos / 1000);
        ThreadPoolExecutor renewer = new ThreadPoolExecutor(MAX_RENEWALS_IN_FLIGHT, MAX_RENEWALS_IN_FLIGHT, 30,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), DaemonThreads.numbered("distlock-jdbc-renewal"));
        renewer.allowCoreThreadTimeOut(true);
        this.renewer = renewer;
        this.renewalPeriodNanos = Math.max(1, this.ttlNanos / 3);
        this.maintenance.scheduleWithFixedDelay(this::renew, this.renewalPeriodNanos, this.renewalPeriodNanos,
                TimeUnit.NANOSECONDS);
    }

    /**
     * @return the current session if it is alive here, else a new one (the old one lost first),
     * started within {@code attempt}
     */
    JdbcSession liveSession(Wait attempt) throws StoreUnavailableException, InterruptedException {
        JdbcSession current = this.session;
        if (current != null && current.isAlive(this.livenessNanos)) {
            return current;
        }
        if (!attempt.lock(this.sessionStart)) {
            throw new StoreUnavailableException("Starting a session on " + this.calls.where() + " took too long", null);
        }
        try {
            this.calls.checkOpen();
            current = this.session;
            if (current != null && current.isAlive(this.livenessNanos)) {
                return current;
            }
            if (current != null) {
                loseSession(current, "the database acknowledged no renewal of the session within the lease TTL");
            }
            String id = UUID.randomUUID().toString();
            long sentAt = System.nanoTime();
            long ttlMillis = ttlMillis();
            this.calls.call((connection, tables) -> {
                try (PreparedStatement insert = this.calls.prepare(connection, tables.insertSession)) {
                    insert.setString(1, id);
                    insert.setString(2, this.ownerIdentity);
                    insert.setLong(3, ttlMillis);
                    insert.setLong(4, ttlMillis);
                    return insert.executeUpdate();
                }
            }, attempt.atMost(this.calls.requestTimeoutNanos()), "Starting a session");
            JdbcSession started = new JdbcSession(id, sentAt);
            this.session = started;
            scheduleDeadlineCheck();
            return started;
        }
        finally {
            this.sessionStart.unlock();
        }
    }

    /**
     * Renews the session and checks that its entries are still there, on a renewal thread; a
     * renewal still running when the next is due is doubled only once it looks stuck (see
     * {@link #renewalsInFlight}). Never throws.
     */
    private void renew() {
        JdbcSession current = this.session;
        if (current == null || current.lostReason() != null || this.calls.isClosed()) {
            checkDeadlines();
            return;
        }
        long now = System.nanoTime();
        int inFlight = this.renewalsInFlight.get();
        long leftAtNextDue = current.renewedAt() + this.livenessNanos - now - this.renewalPeriodNanos;
        boolean nextTooLate = leftAtNextDue < this.ttlNanos / 4;
        if (inFlight > 0 && (inFlight >= MAX_RENEWALS_IN_FLIGHT
                || (now - this.lastRenewalStartedAt < this.ttlNanos / 4 && !nextTooLate))) {
            return;
        }
        if (!this.renewalsInFlight.compareAndSet(inFlight, inFlight + 1)) {
            return;
        }
        this.lastRenewalStartedAt = now;
        try {
            this.renewer.execute(() -> {
                try {
                    renewNow(current);
                }
                finally {
                    this.renewalsInFlight.decrementAndGet();
                }
            });
        }
        catch (RejectedExecutionException ex) {
            this.renewalsInFlight.decrementAndGet();
        }
        scheduleDeadlineCheck();
    }

    /** An entry of the session as the database has it. */
    private record SessionRow(long number, String lockId) {
    }

    private void renewNow(JdbcSession current) {
        long sentAt = System.nanoTime();
        try {
            Optional<Map<Long, SessionRow>> present = this.calls.withConnection((connection, tables) -> {
                // Committed with the update: a process that froze before a separate commit would keep the row locked.
                JdbcCalls.autoCommitForOneRoundTrip(connection);
                try (PreparedStatement renew = this.calls.prepare(connection, tables.renewSession)) {
                    renew.setLong(1, ttlMillis());
                    renew.setString(2, current.id);
                    if (renew.executeUpdate() == 0) {
                        return Optional.empty();
                    }
                }
                Map<Long, SessionRow> rowsByFence = new HashMap<>();
                try (PreparedStatement entries = this.calls.prepare(connection, tables.sessionEntries)) {
                    entries.setString(1, current.id);
                    try (ResultSet rows = entries.executeQuery()) {
                        while (rows.next()) {
                            rowsByFence.put(rows.getLong(1), new SessionRow(rows.getLong(2), rows.getString(3)));
                        }
                    }
                }
                return Optional.of(rowsByFence);
            });
            if (present.isEmpty()) {
                loseSession(current, "its session row was gone from the database or had expired");
                return;
            }
            if (current.lostReason() != null) {
                // Renewed in the database after this process gave the session up: its rows must not outlive the loss.
                this.removals.deleteSessionLater(current);
                return;
            }
            current.renewed(sentAt);
            for (JdbcEntry entry : current.entries) {
                // Only entries whose write had committed before the read was sent can be missing from it.
                if (!entry.isWritten() || entry.writtenAt() - sentAt >= 0) {
                    continue;
                }
                if (present.get().containsKey(entry.fence())) {
                    entry.found(sentAt);
                }
                else {
                    entry.lose("its lock entry was gone from the database (deleted)", false);
                }
            }
            // Invariant: an entry's number is unsettled from before its write until its release or removal
            // was answered, so a row of this session with a settled number is a ghost (a write that committed
            // after its caller gave up and after its removal found nothing): delete it, or it would hold its
            // key for as long as this process lives.
            for (SessionRow row : present.get().values()) {
                if (!current.unsettled.contains(row.number())) {
                    this.removals.removeGhost(current, row.number(), row.lockId());
                }
            }
            this.removals.sweepLater();
            scheduleDeadlineCheck();
        }
        catch (SQLException | RuntimeException ex) {
            this.statistics.backendError();
            logger.debug("Renewal of the lock session on {} failed: {}", this.calls.where(), ex.getMessage());
            // A transient failure must not cost a hold that is still within its TTL: try again soon.
            try {
                this.maintenance.schedule(this::renew, Math.min(FAILED_RENEWAL_RETRY_NANOS, this.ttlNanos / 10),
                        TimeUnit.NANOSECONDS);
            }
            catch (RejectedExecutionException closedMeanwhile) {
                // Closed.
            }
        }
    }

    /** Ends the session once one TTL passed since the send of its last acknowledged renewal. */
    private void checkDeadlines() {
        JdbcSession current = this.session;
        if (current == null) {
            return;
        }
        if (current.lostReason() == null && System.nanoTime() - current.renewedAt() >= this.livenessNanos) {
            loseSession(current, noRenewal(this.ttlNanos));
        }
        scheduleDeadlineCheck();
    }

    /** Why a session whose renewals the database did not acknowledge in time is lost. */
    static String noRenewal(long ttlNanos) {
        return "the database acknowledged no renewal of the lock session within the lease TTL ("
                + Duration.ofNanos(ttlNanos) + ")";
    }

    /** Arms one check at the current session's deadline. */
    private void scheduleDeadlineCheck() {
        this.deadlineLock.lock();
        try {
            JdbcSession current = this.session;
            if (current == null || current.lostReason() != null || this.maintenance.isShutdown()) {
                return;
            }
            long delay = Math.max(0, current.renewedAt() + this.livenessNanos - System.nanoTime());
            if (this.deadlineCheck != null) {
                this.deadlineCheck.cancel(false);
            }
            this.deadlineCheck = this.maintenance.schedule(this::checkDeadlines, delay, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed meanwhile.
        }
        finally {
            this.deadlineLock.unlock();
        }
    }

    /** Ends {@code lost} and its entries, once; also deletes its row unless the store is closing. */
    void loseSession(JdbcSession lost, String reason) {
        if (!lost.lose(reason)) {
            return;
        }
        if (!this.calls.isClosed()) {
            this.statistics.sessionLost();
            logger.warn("Lock session {} on {} ended: {}; its locks are lost", lost.id, this.calls.where(), reason);
        }
        for (JdbcEntry entry : lost.entries) {
            entry.lose(reason, true);
        }
        if (!this.calls.isClosed()) {
            this.removals.deleteSessionLater(lost);
        }
    }

    /**
     * @return the session at close: one being started now is installed before this reads it (and
     * none after, since the store is marked closed first)
     */
    @Nullable JdbcSession sessionAtClose() {
        this.sessionStart.lock();
        try {
            return this.session;
        }
        finally {
            this.sessionStart.unlock();
        }
    }

    /** Stops the renewal threads. */
    void shutdownNow() {
        this.renewer.shutdownNow();
    }

    @Nullable JdbcSession session() {
        return this.session;
    }

    boolean isSessionAlive() {
        JdbcSession current = this.session;
        return current != null && current.isAlive(this.livenessNanos);
    }

    @Nullable Duration sessionRenewalAge() {
        JdbcSession current = this.session;
        return (current != null) ? Duration.ofNanos(System.nanoTime() - current.renewedAt()) : null;
    }

    long ttlNanos() {
        return this.ttlNanos;
    }

    /** @return how long a session counts as alive after the send of its last acknowledged renewal */
    long livenessNanos() {
        return this.livenessNanos;
    }

    private long ttlMillis() {
        return TimeUnit.NANOSECONDS.toMillis(this.ttlNanos);
    }
}
