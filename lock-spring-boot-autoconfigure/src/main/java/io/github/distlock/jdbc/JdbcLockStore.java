package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

import javax.sql.DataSource;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.core.LockStatistics;
import io.github.distlock.core.Wait;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC {@link LockStore}: the tables of {@link JdbcTables}, reached through {@link JdbcCalls}
 * (short transactions on connections borrowed from the application's {@link DataSource} for one call
 * each, on the store's own threads, so a held lock pins no connection and the caller's wait bounds
 * every call).
 *
 * <p>Invariants: an entry is tracked (renewed with its session, reachable by notifications) from
 * just before its write until it ends; a session is lost exactly when the database says its row is
 * gone or expired or when one TTL passed since the send of its last acknowledged renewal, whichever
 * comes first, so no hold outlives what the database may have expired; entries of one key are
 * written one transaction at a time (the key row's lock), so the queue's fence order is its commit
 * order; removals the database did not confirm are retried until confirmed or their session ended.
 */
final class JdbcLockStore implements LockStore {

    private static final Logger logger = LoggerFactory.getLogger(JdbcLockStore.class);

    /** After a failed renewal, the next comes this soon (or at a tenth of the TTL, if sooner). */
    private static final long FAILED_RENEWAL_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final JdbcCalls calls;

    private final JdbcWakeups wakeups;

    private final JdbcEntryRemovals removals;

    private final JdbcLockInspector inspector;

    private final long ttlNanos;

    /**
     * How long a session counts as alive here after the send of its last acknowledged renewal: the
     * TTL less a margin, since the database stores its expiry in whole milliseconds (rounded) and
     * its clock may run a little faster than this process's (NTP slews up to 500 ppm).
     */
    private final long livenessNanos;

    private final String ownerIdentity;

    private final LockStatistics.Recorder statistics;

    private final HoldLossListener losses;

    /** Schedules; never blocks on the database. */
    private final ScheduledExecutorService maintenance;

    /** Renewals and sweeps, one at a time. */
    private final ExecutorService renewer;

    private final ReentrantLock sessionStart = new ReentrantLock();

    private final ReentrantLock deadlineLock = new ReentrantLock();

    private final AtomicBoolean renewing = new AtomicBoolean();

    private volatile @Nullable JdbcSession session;

    private @Nullable ScheduledFuture<?> deadlineCheck;

    JdbcLockStore(DataSource dataSource, String tablePrefix, @Nullable JdbcDialect dialect, Duration leaseTtl,
            Duration requestTimeout, @Nullable Duration pollInterval, String ownerIdentity, String where,
            LockStatistics.Recorder statistics, HoldLossListener losses) {
        this.calls = new JdbcCalls(dataSource, tablePrefix, dialect, requestTimeout, where);
        this.maintenance = Executors.newSingleThreadScheduledExecutor(JdbcCalls.daemon("distlock-jdbc-maintenance"));
        this.wakeups = new JdbcWakeups(this.calls, pollInterval);
        this.removals = new JdbcEntryRemovals(this.calls, this.wakeups, this.maintenance, statistics);
        this.inspector = new JdbcLockInspector(this.calls);
        this.ttlNanos = leaseTtl.toNanos();
        this.livenessNanos = this.ttlNanos - Math.max(TimeUnit.MILLISECONDS.toNanos(2), this.ttlNanos / 1000);
        this.ownerIdentity = ownerIdentity;
        this.statistics = statistics;
        this.losses = losses;
        this.renewer = Executors.newSingleThreadExecutor(JdbcCalls.daemon("distlock-jdbc-renewal"));
        long renewalPeriod = Math.max(1, this.ttlNanos / 3);
        this.maintenance.scheduleWithFixedDelay(this::renew, renewalPeriod, renewalPeriod, TimeUnit.NANOSECONDS);
    }

    /** The oldest entry of a key up to some fence, and the milliseconds its session has left by the database's clock. */
    record Head(long fence, String value, String sessionId, long leftMillis) {
    }

    @Override
    public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException {
        checkOpen();
        JdbcSession current = liveSession(attempt);
        String value = EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(),
                System.currentTimeMillis()).replace('\0', ' ');
        return new JdbcEntry(this, current, key, value);
    }

    private JdbcSession liveSession(Wait attempt) throws StoreUnavailableException, InterruptedException {
        JdbcSession current = this.session;
        if (current != null && current.isAlive(this.livenessNanos)) {
            return current;
        }
        if (!attempt.lock(this.sessionStart)) {
            throw new StoreUnavailableException("Starting a session on " + this.calls.where() + " took too long", null);
        }
        try {
            checkOpen();
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
     * Writes {@code entry} and reads the head of its queue, in one transaction that holds the key
     * row's lock, so no entry of the key with a smaller fence can commit after it.
     * @return the head, which is the entry itself if it holds
     * @throws EntryLostException if its session was gone from the database
     */
    Head enqueue(JdbcEntry entry, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        CompletableFuture<Enqueued> write = this.calls.submit((connection, tables) -> (tables.enqueueAtOnce != null)
                ? enqueueAtOnce(connection, tables, entry) : JdbcCalls.inTransaction(connection, (c, t) -> {
            try (PreparedStatement lockRow = this.calls.prepare(c, t.lockKeyRow)) {
                lockRow.setString(1, entry.lockId);
                lockRow.setString(2, JdbcTables.escape(entry.lockKey()));
                lockRow.executeUpdate();
            }
            long fence;
            try (PreparedStatement insert = JdbcCalls.prepareInsert(c, t)) {
                this.calls.bound(insert);
                insert.setString(1, entry.lockId);
                insert.setString(2, entry.session.id);
                insert.setLong(3, entry.number);
                insert.setString(4, entry.value);
                insert.executeUpdate();
                try (ResultSet keys = insert.getGeneratedKeys()) {
                    if (!keys.next()) {
                        throw new SQLException("The database returned no fence for the new lock entry");
                    }
                    fence = keys.getLong(1);
                }
            }
            Head head = readHead(c, t, entry.lockId, fence);
            if (head == null) {
                throw new SQLException("The new lock entry was not found in its own transaction");
            }
            return new Enqueued(fence, head);
        }, tables));
        Enqueued answer;
        try {
            answer = StoreCalls.await(write.copy(), attempt.atMost(this.calls.requestTimeoutNanos()), "Writing the lock entry");
        }
        catch (StoreUnavailableException ex) {
            if (ex.getCause() instanceof SQLException sql && JdbcCalls.isForeignKeyViolation(sql)) {
                JdbcSession lost = entry.session;
                loseSession(lost, "its session row was gone from the database (expired and deleted)");
                String reason = lost.lostReason();
                throw new EntryLostException((reason != null) ? reason : "its session was lost", true);
            }
            // Committed later after all: removed then too (and by the renewal's check of its session's rows).
            write.whenComplete((late, failure) -> removeLater(entry));
            throw ex;
        }
        catch (InterruptedException ex) {
            write.whenComplete((late, failure) -> removeLater(entry));
            throw ex;
        }
        entry.written(answer.fence());
        this.wakeups.register(entry);
        return answer.head();
    }

    private record Enqueued(long fence, Head head) {
    }

    /** The write of an entry in one round trip, retried on deadlocks as {@link JdbcCalls#inTransaction} does. */
    private Enqueued enqueueAtOnce(Connection connection, JdbcTables tables, JdbcEntry entry) throws SQLException {
        String sql = tables.enqueueAtOnce;
        if (sql == null) {
            throw new IllegalStateException("No single-round-trip write for " + tables.dialect());
        }
        if (!connection.getAutoCommit()) {
            // One implicit transaction needs autocommit; the pool gets the setting back afterwards.
            connection.setAutoCommit(true);
        }
        for (int attempt = 1;; attempt++) {
            try (PreparedStatement write = this.calls.prepare(connection, sql)) {
                write.setString(1, entry.lockId);
                write.setString(2, JdbcTables.escape(entry.lockKey()));
                write.setString(3, entry.lockId);
                write.setString(4, entry.session.id);
                write.setLong(5, entry.number);
                write.setString(6, entry.value);
                write.setString(7, entry.lockId);
                write.execute();
                long fence = nextRow(write, "the fence of the new lock entry").getLong(1);
                ResultSet headRow = nextRow(write, "the head of the queue");
                return new Enqueued(fence, new Head(headRow.getLong(1), headRow.getString(2), headRow.getString(3),
                        headRow.getLong(4)));
            }
            catch (SQLException ex) {
                if (attempt >= JdbcCalls.WRITE_ATTEMPTS || !JdbcCalls.isTransient(ex, tables.dialect())) {
                    throw ex;
                }
            }
        }
    }

    /** @return the first row of the next result set of a multi-statement call */
    private static ResultSet nextRow(PreparedStatement statement, String what) throws SQLException {
        while (!statement.getMoreResults() && statement.getUpdateCount() != -1) {
            // An update count: skip it.
        }
        ResultSet rows = statement.getResultSet();
        if (rows == null || !rows.next()) {
            throw new SQLException("The database answered no row for " + what);
        }
        return rows;
    }

    private @Nullable Head readHead(Connection connection, JdbcTables tables, String lockId, long fence)
            throws SQLException {
        try (PreparedStatement head = this.calls.prepare(connection, tables.head)) {
            head.setString(1, lockId);
            head.setLong(2, fence);
            try (ResultSet row = head.executeQuery()) {
                if (!row.next()) {
                    return null;
                }
                return new Head(row.getLong(1), row.getString(2), row.getString(3), row.getLong(4));
            }
        }
    }

    /** @return the oldest entry of the entry's key up to the entry, or {@code null} if the entry is gone */
    @Nullable Head head(JdbcEntry entry, Wait bound) throws StoreUnavailableException, InterruptedException {
        return this.calls.call((connection, tables) -> Optional.ofNullable(readHead(connection, tables, entry.lockId,
                entry.fence())), bound, "Reading the lock queue").orElse(null);
    }

    /** Deletes a session whose time has passed by the database's clock, with its entries. */
    void deleteExpiredSession(String sessionId, Wait bound) throws StoreUnavailableException, InterruptedException {
        int deleted = this.calls.call((connection, tables) -> {
            try (PreparedStatement delete = this.calls.prepare(connection, tables.deleteExpiredSession)) {
                delete.setString(1, sessionId);
                return delete.executeUpdate();
            }
        }, bound, "Deleting an expired session");
        if (deleted > 0) {
            logger.debug("Deleted expired lock session {} and its entries", sessionId);
        }
    }

    /**
     * Deletes a held entry, with a compare on its fence and session; on PostgreSQL, notifies the
     * next entry of its key in the same statement.
     * @return whether it was there
     */
    boolean release(JdbcEntry entry) throws StoreUnavailableException {
        Wait bound = Wait.timeout(this.calls.requestTimeoutNanos(), false);
        int released;
        try {
            released = this.calls.call((connection, tables) -> deleteEntry(connection, tables, entry), bound,
                    "Releasing the lock entry");
            entry.session.unsettled.remove(entry.number);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
        this.wakeups.wakeLocalWaiters(entry.lockId);
        return released > 0;
    }

    private int deleteEntry(Connection connection, JdbcTables tables, JdbcEntry entry) throws SQLException {
        String notifying = tables.deleteEntryAndNotify;
        if (notifying == null) {
            try (PreparedStatement delete = this.calls.prepare(connection, tables.deleteEntry)) {
                delete.setLong(1, entry.fence());
                delete.setString(2, entry.session.id);
                return delete.executeUpdate();
            }
        }
        try (PreparedStatement delete = this.calls.prepare(connection, notifying)) {
            delete.setString(1, entry.lockId);
            delete.setLong(2, entry.fence());
            delete.setString(3, entry.session.id);
            delete.setString(4, tables.channel);
            delete.setLong(5, entry.fence());
            return JdbcCalls.countOfSecondStatement(delete, "release");
        }
    }

    void track(JdbcEntry entry) {
        entry.session.entries.add(entry);
        // Checked after adding: a session lost before that would never end this entry.
        String sessionLost = entry.session.lostReason();
        if (sessionLost != null) {
            entry.lose(sessionLost, true);
        }
    }

    void untrack(JdbcEntry entry) {
        entry.session.entries.remove(entry);
        this.wakeups.forget(entry);
    }

    void holdLost(JdbcEntry entry, String reason) {
        this.losses.holdLost(entry, reason);
    }

    void failed(StoreUnavailableException ex) {
        this.statistics.backendError();
        logger.debug("Database call failed: {}", ex.getMessage());
    }

    // ---- removals ------------------------------------------------------------------------------

    void removeLater(JdbcEntry entry) {
        this.removals.removeLater(entry);
    }

    void removeBeforeReturning(JdbcEntry entry) {
        this.removals.removeBeforeReturning(entry);
    }

    /** @return removals not yet confirmed by the database (nor made moot by the session's end) */
    int pendingRemovals() {
        return this.removals.pendingRemovals();
    }

    // ---- session renewal -----------------------------------------------------------------------

    /**
     * Renews the session and checks that its entries are still there, on the renewal thread; a
     * renewal still running when the next is due is not doubled. Never throws.
     */
    private void renew() {
        JdbcSession current = this.session;
        if (current == null || current.lostReason() != null || this.calls.isClosed()) {
            checkDeadlines();
            return;
        }
        if (!this.renewing.compareAndSet(false, true)) {
            return;
        }
        try {
            this.renewer.execute(() -> {
                try {
                    renewNow(current);
                }
                finally {
                    this.renewing.set(false);
                }
            });
        }
        catch (RejectedExecutionException ex) {
            this.renewing.set(false);
        }
        scheduleDeadlineCheck();
    }

    private void renewNow(JdbcSession current) {
        long sentAt = System.nanoTime();
        try {
            Optional<Map<Long, Long>> present = this.calls.withConnection((connection, tables) -> {
                try (PreparedStatement renew = this.calls.prepare(connection, tables.renewSession)) {
                    renew.setLong(1, ttlMillis());
                    renew.setString(2, current.id);
                    if (renew.executeUpdate() == 0) {
                        return Optional.empty();
                    }
                }
                if (!connection.getAutoCommit()) {
                    connection.commit();
                }
                Map<Long, Long> numbersByFence = new HashMap<>();
                try (PreparedStatement entries = this.calls.prepare(connection, tables.sessionEntries)) {
                    entries.setString(1, current.id);
                    try (ResultSet rows = entries.executeQuery()) {
                        while (rows.next()) {
                            numbersByFence.put(rows.getLong(1), rows.getLong(2));
                        }
                    }
                }
                return Optional.of(numbersByFence);
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
                if (entry.isWritten() && entry.writtenAt() - sentAt < 0 && !present.get().containsKey(entry.fence())) {
                    entry.lose("its lock entry was gone from the database (deleted)", false);
                }
            }
            // Invariant: an entry's number is unsettled from before its write until its release or removal
            // was answered, so a row of this session with a settled number is a ghost (a write that committed
            // after its caller gave up and after its removal found nothing): delete it, or it would hold its
            // key for as long as this process lives.
            for (Long number : present.get().values()) {
                if (!current.unsettled.contains(number)) {
                    this.removals.removeGhost(current, number);
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
    void scheduleDeadlineCheck() {
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

    private void loseSession(JdbcSession lost, String reason) {
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

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        return this.inspector.read(key, maxEntries, withLeases);
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        return this.inspector.readAll(maxEntries);
    }

    // ---- lifecycle and settings ----------------------------------------------------------------

    @Override
    public CompletableFuture<Void> connect() {
        CompletableFuture<Void> connected = new CompletableFuture<>();
        try {
            this.calls.execute(() -> {
                try {
                    liveSession(Wait.timeout(this.calls.requestTimeoutNanos(), false));
                    this.wakeups.ensureListening();
                    connected.complete(null);
                }
                catch (StoreUnavailableException | InterruptedException | RuntimeException ex) {
                    connected.completeExceptionally(new IllegalStateException("Could not connect to " + this.calls.where()
                            + ": " + ex.getMessage(), ex));
                }
            });
        }
        catch (RejectedExecutionException ex) {
            connected.completeExceptionally(new IllegalStateException("The lock registry is closed", ex));
        }
        return connected;
    }

    /**
     * Releases every entry of this store (notifying the next entries) and deletes its session, so
     * its locks are free at once; holds still open report themselves lost and waiters fail.
     * The {@link DataSource} stays open.
     */
    void close() {
        if (this.calls.isClosed()) {
            return;
        }
        this.calls.markClosed();
        // A session being started now is installed before this reads it (and none after: closed is set).
        this.sessionStart.lock();
        JdbcSession current;
        try {
            current = this.session;
        }
        finally {
            this.sessionStart.unlock();
        }
        List<JdbcEntry> open = this.wakeups.writtenEntries();
        if (current != null) {
            loseSession(current, "the lock registry was closed");
            try {
                StoreCalls.await(this.calls.submit((connection, tables) -> {
                    for (JdbcEntry entry : open) {
                        deleteEntry(connection, tables, entry);
                    }
                    try (PreparedStatement delete = this.calls.prepare(connection, tables.deleteSession)) {
                        delete.setString(1, current.id);
                        return delete.executeUpdate();
                    }
                }), Wait.timeout(this.calls.requestTimeoutNanos(), false), "Deleting the session");
            }
            catch (StoreUnavailableException | InterruptedException ex) {
                logger.warn("Could not delete this registry's lock session from {} at close ({}); its locks are "
                        + "freed when it expires", this.calls.where(), ex.getMessage());
            }
        }
        this.wakeups.close();
        this.maintenance.shutdownNow();
        this.renewer.shutdownNow();
        this.calls.shutdownNow();
    }

    long ttlNanos() {
        return this.ttlNanos;
    }

    /** @return how long a session counts as alive after the send of its last acknowledged renewal */
    long livenessNanos() {
        return this.livenessNanos;
    }

    long ttlMillis() {
        return TimeUnit.NANOSECONDS.toMillis(this.ttlNanos);
    }

    long pollIntervalNanos() {
        return this.wakeups.pollIntervalNanos();
    }

    long nextPollNanos() {
        return this.wakeups.nextPollNanos();
    }

    @Nullable JdbcSession session() {
        return this.session;
    }

    @Nullable JdbcTables tablesOrNull() {
        return this.calls.tablesOrNull();
    }

    @Override
    public String namespace() {
        return this.calls.tablePrefix();
    }

    @Override
    public long requestTimeoutNanos() {
        return this.calls.requestTimeoutNanos();
    }

    @Override
    public boolean isSessionAlive() {
        JdbcSession current = this.session;
        return current != null && current.isAlive(this.livenessNanos);
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        JdbcSession current = this.session;
        return (current != null) ? Duration.ofNanos(System.nanoTime() - current.renewedAt()) : null;
    }

    @Override
    public String describe() {
        return this.calls.where();
    }

    @Override
    public void checkOpen() {
        this.calls.checkOpen();
    }

    @Override
    public boolean isClosed() {
        return this.calls.isClosed();
    }
}
