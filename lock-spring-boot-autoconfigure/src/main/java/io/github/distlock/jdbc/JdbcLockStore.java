package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import javax.sql.DataSource;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC {@link LockStore}: the tables of {@link JdbcTables}, reached through {@link JdbcCalls}
 * (short transactions on connections borrowed from the application's {@link DataSource} for one call
 * each, on the store's own threads, so a held lock pins no connection and the caller's wait bounds
 * every call). This class is the seam: it writes entries and reads the heads of their queues,
 * releases them and tracks them; the session is {@link JdbcSessionKeeper}'s, waking waiters
 * {@link JdbcWakeups}', removals in the background and sweeps {@link JdbcEntryRemovals}', reads for
 * errors, the endpoint and tools {@link JdbcLockInspector}'s.
 *
 * <p>Invariants: an entry is tracked (renewed with its session, reachable by notifications) from
 * just before its write until it ends; a session is lost exactly when the database says its row is
 * gone or expired or when one TTL passed since the send of its last acknowledged renewal, whichever
 * comes first, so no hold outlives what the database may have expired; entries of one key are
 * written one transaction at a time (the key row's lock), so the queue's fence order is its commit
 * order; removals the database did not confirm are retried until confirmed or their session ended.
 */
final class JdbcLockStore implements LockStore {

    /**
     * The longest escaped key (in UTF-8 bytes) this store writes: 1 MiB, since every acquisition
     * writes its key. The databases take more: {@code LOCK_KEY} holds 16 MiB on MySQL and MariaDB
     * ({@code MEDIUMTEXT}), and the statement must fit MariaDB's default {@code max_allowed_packet}
     * of 16 MiB with the driver escaping a quote or backslash to two bytes, so 8 MiB at most; but at
     * 8 MiB a try-once's write did not finish within its second on PostgreSQL or MariaDB.
     */
    private static final long MAX_ESCAPED_KEY_BYTES = 1024 * 1024;

    private static final Logger logger = LoggerFactory.getLogger(JdbcLockStore.class);

    private final JdbcCalls calls;

    /** Schedules renewals, deadline checks and retries of removals; never blocks on the database. */
    private final ScheduledExecutorService maintenance;

    private final JdbcWakeups wakeups;

    /**
     * Whether this registry's writes tell the older entries of their key (PostgreSQL), and its
     * entries rely on being told. Only for a registry that lingers: a notification per waiting write
     * cost about a fifth of the contended handoff rate (benchmark J2), which passes bounded by the
     * window from the store acquisition do not need.
     */
    private final boolean queuedBehindSignals;

    private final JdbcEntryRemovals removals;

    private final JdbcSessionKeeper keeper;

    private final JdbcLockInspector inspector;

    private final String ownerIdentity;

    private final StoreEvents statistics;

    private final HoldLossListener losses;

    JdbcLockStore(DataSource dataSource, String tablePrefix, @Nullable JdbcDialect dialect, Duration leaseTtl,
            Duration requestTimeout, @Nullable Duration pollInterval, boolean queuedBehindSignals, String ownerIdentity,
            String where, StoreEvents statistics, HoldLossListener losses) {
        this.queuedBehindSignals = queuedBehindSignals;
        this.calls = new JdbcCalls(dataSource, tablePrefix, dialect, requestTimeout, where);
        this.maintenance = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("distlock-jdbc-maintenance"));
        this.wakeups = new JdbcWakeups(this.calls, pollInterval);
        this.removals = new JdbcEntryRemovals(this.calls, this.wakeups, this.maintenance, statistics);
        this.keeper = new JdbcSessionKeeper(this.calls, this.removals, this.maintenance, statistics, ownerIdentity,
                leaseTtl);
        this.inspector = new JdbcLockInspector(this.calls);
        this.ownerIdentity = ownerIdentity;
        this.statistics = statistics;
        this.losses = losses;
    }

    /** The oldest entry of a key up to some fence, and the milliseconds its session has left by the database's clock. */
    record Head(long fence, String value, String sessionId, long leftMillis) {
    }

    // ---- entries -------------------------------------------------------------------------------

    @Override
    public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException {
        checkOpen();
        JdbcSession current = this.keeper.liveSession(attempt);
        String value = EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(),
                System.currentTimeMillis()).replace('\0', ' ');
        return new JdbcEntry(this, current, key, value);
    }

    /**
     * Writes {@code entry} and reads the head of its queue, in one transaction that holds the key
     * row's lock, so no entry of the key with a smaller fence can commit after it.
     * @return the head, which is the entry itself if it holds
     * @throws EntryLostException if its session was gone from the database
     */
    Head enqueue(JdbcEntry entry, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        CompletableFuture<Enqueued> write = this.calls.submit((connection, tables) -> tables.writesAtOnce()
                ? enqueueAtOnce(connection, tables, entry)
                : JdbcCalls.inTransaction(connection, (c, t) -> writeEntry(c, t, entry), tables));
        Enqueued answer;
        try {
            answer = StoreCalls.await(write.copy(), attempt.atMost(this.calls.requestTimeoutNanos()),
                    "Writing the lock entry");
        }
        catch (StoreUnavailableException ex) {
            if (ex.getCause() instanceof SQLException sql && JdbcCalls.isForeignKeyViolation(sql)) {
                throw endSession(entry.session, "its session row was gone from the database (expired and deleted)",
                        true);
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

    /** Package-private, as are the two calls that use it, for the benchmark's run of these statements by hand. */
    record Enqueued(long fence, Head head) {
    }

    /**
     * The write of an entry in one round trip, retried on deadlocks and fence collisions as
     * {@link JdbcCalls#inTransaction} does.
     */
    Enqueued enqueueAtOnce(Connection connection, JdbcTables tables, JdbcEntry entry) throws SQLException {
        JdbcCalls.autoCommitForOneRoundTrip(connection);
        boolean aboveEveryEntry = false;
        for (int attempt = 1;; attempt++) {
            String sql = tables.enqueueAtOnce(this.queuedBehindSignals, aboveEveryEntry);
            if (sql == null) {
                throw new IllegalStateException("No single-round-trip write for " + tables.dialect());
            }
            try (PreparedStatement write = this.calls.prepare(connection, sql)) {
                write.setString(1, entry.lockId);
                write.setString(2, JdbcTables.escape(entry.lockKey()));
                write.setString(3, entry.lockId);
                write.setString(4, entry.lockId);
                write.setString(5, entry.lockId);
                write.setString(6, entry.session.id);
                write.setLong(7, entry.number);
                write.setString(8, entry.value);
                if (this.queuedBehindSignals) {
                    write.setString(9, tables.channel);
                    write.setString(10, entry.lockId);
                    write.setString(11, entry.lockId);
                    write.setString(12, entry.lockId);
                }
                else {
                    write.setString(9, entry.lockId);
                }
                JdbcCalls.executeAtOnce(write);
                long fence = nextRow(write, "the fence of the new lock entry").getLong(1);
                ResultSet headRow = nextRow(write, "the head of the queue");
                return new Enqueued(fence, new Head(headRow.getLong(1), headRow.getString(2), headRow.getString(3),
                        headRow.getLong(4)));
            }
            catch (SQLException ex) {
                boolean collision = JdbcCalls.isFenceCollision(ex);
                boolean again = collision || JdbcCalls.isTransient(ex, tables.dialect());
                if (attempt >= JdbcCalls.WRITE_ATTEMPTS || !again) {
                    throw ex;
                }
                // Raised above the key's entries, a fence may meet another key's entry, and would again.
                aboveEveryEntry |= collision;
            }
        }
    }

    /**
     * The write of an entry on MySQL, MariaDB and H2, in the transaction {@link JdbcCalls#inTransaction}
     * runs it in: lock the key row and reserve the key's next fence in it (the database's clock, or
     * one above the key's last fence where the clock is behind it), insert the entry at that fence,
     * read the head of the queue and whether the entry is its key's newest. The key row's lock is
     * held until the commit, so the key's last fence is always its newest entry's or above.
     * <p>
     * The entry goes above every entry instead, and the key's last fence with it, when the reserved
     * fence is not above the key's other entries (rows written by hand or by an earlier version, or
     * on H2, whose clock is the transaction's start, one that waited for the key row's lock while
     * another committed), so that the queue's order stays the order of the writes; or when it is
     * another key's entry's (both keys' clocks behind, raised to the same value), so that it does not
     * meet that fence again and again. Both are rare; the usual write is four statements.
     */
    private Enqueued writeEntry(Connection connection, JdbcTables tables, JdbcEntry entry) throws SQLException {
        String lockRowSql = tables.lockKeyRowReservingFence;
        if (lockRowSql == null) {
            throw new IllegalStateException("No fence-reserving key row statement for " + tables.dialect());
        }
        try (PreparedStatement lockRow = this.calls.prepare(connection, lockRowSql)) {
            lockRow.setString(1, entry.lockId);
            lockRow.setString(2, JdbcTables.escape(entry.lockKey()));
            lockRow.executeUpdate();
        }
        boolean aboveAll = false;
        try (PreparedStatement insert = this.calls.prepare(connection, tables.insertEntryAtReservedFence)) {
            insert.setString(1, entry.lockId);
            insert.setString(2, entry.lockId);
            insert.setString(3, entry.session.id);
            insert.setLong(4, entry.number);
            insert.setString(5, entry.value);
            insert.executeUpdate();
        }
        catch (SQLException ex) {
            if (!JdbcCalls.isFenceCollision(ex)) {
                throw ex;
            }
            // MySQL, MariaDB and H2 undo only the failed statement: the key row's lock stays. The fence is
            // another key's entry's, so the newest of all is at least as high as it, and so is the one above it.
            aboveAll = true;
            try (PreparedStatement insert = this.calls.prepare(connection, tables.insertEntryAt)) {
                insert.setLong(1, newestFence(connection, tables) + 1);
                insert.setString(2, entry.lockId);
                insert.setString(3, entry.session.id);
                insert.setLong(4, entry.number);
                insert.setString(5, entry.value);
                insert.executeUpdate();
            }
        }
        long fence;
        boolean newest;
        Head head;
        try (PreparedStatement read = this.calls.prepare(connection, tables.newEntryAndHead)) {
            read.setString(1, entry.session.id);
            read.setLong(2, entry.number);
            try (ResultSet row = read.executeQuery()) {
                if (!row.next()) {
                    throw new SQLException("The new lock entry was not found in its own transaction");
                }
                head = new Head(row.getLong(1), row.getString(2), row.getString(3), row.getLong(4));
                fence = row.getLong(5);
                long newestOther = row.getLong(6);
                newest = row.wasNull() || newestOther < fence;
            }
        }
        if (newest && !aboveAll) {
            return new Enqueued(fence, head);
        }
        if (!newest) {
            fence = newestFence(connection, tables) + 1;
            try (PreparedStatement move = this.calls.prepare(connection, tables.moveEntry)) {
                move.setLong(1, fence);
                move.setString(2, entry.session.id);
                move.setLong(3, entry.number);
                move.executeUpdate();
            }
        }
        try (PreparedStatement last = this.calls.prepare(connection, tables.setLastFence)) {
            last.setLong(1, fence);
            last.setString(2, entry.lockId);
            last.executeUpdate();
        }
        Head moved = readHead(connection, tables, entry.lockId, fence);
        if (moved == null) {
            throw new SQLException("The new lock entry was not found in its own transaction");
        }
        return new Enqueued(fence, moved);
    }

    /** @return the newest fence of all entries, 0 if none */
    private long newestFence(Connection connection, JdbcTables tables) throws SQLException {
        try (PreparedStatement read = this.calls.prepare(connection, tables.newestFence);
                ResultSet row = read.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    /** @return the first row of the next result set of a multi-statement call */
    private static ResultSet nextRow(PreparedStatement statement, String what) throws SQLException {
        ResultSet rows = JdbcCalls.nextResultSet(statement);
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

    /**
     * @return whether entries learn that another one queued behind them: on PostgreSQL, where this
     * registry's writes tell older entries (only if it lingers: see the field {@code queuedBehindSignals})
     */
    boolean reportsQueuedBehind() {
        JdbcTables current = this.calls.tablesOrNull();
        return this.queuedBehindSignals && current != null && current.dialect().hasNotifications();
    }

    /**
     * Deletes a session whose time has passed by the database's clock, with its entries, waking the
     * waiters behind them (see {@link JdbcEntryRemovals#deleteSession}).
     */
    void deleteExpiredSession(String sessionId, Wait bound) throws StoreUnavailableException, InterruptedException {
        int deleted = this.calls.call((connection, tables) -> this.removals.deleteSession(connection, tables,
                sessionId, true), bound, "Deleting an expired session");
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

    int deleteEntry(Connection connection, JdbcTables tables, JdbcEntry entry) throws SQLException {
        // A release commits in the round trip that deletes: see JdbcCalls.autoCommitForOneRoundTrip.
        JdbcCalls.autoCommitForOneRoundTrip(connection);
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

    JdbcCalls calls() {
        return this.calls;
    }

    /**
     * The database's clock says {@code session} has expired before this process saw it end (the
     * clock moved ahead of its renewals, or this process was paused): any process may end it and
     * take its keys, so it ends here too, and the next acquisition starts a new one. An answer of a
     * healthy database, not a failing store: the core queues again at once, also within a wait that
     * is already over.
     * @return what the acquisition on it throws
     */
    EntryLostException sessionExpiredInTheDatabase(JdbcSession session) {
        return endSession(session, "its session had expired by the database's clock before this process saw it "
                + "end (the database's clock moved ahead of its renewals, or this process was paused)", false);
    }

    /**
     * Ends {@code session} and its entries (once: a session already lost keeps its first reason).
     * @param storeFailed whether the loss counts as the store failing (see {@link EntryLostException#isSessionLost()})
     * @return what an acquisition on the session throws
     */
    private EntryLostException endSession(JdbcSession session, String reason, boolean storeFailed) {
        this.keeper.loseSession(session, reason);
        return new EntryLostException(Objects.requireNonNullElse(session.lostReason(), reason), storeFailed);
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

    // ---- removals, in the background -----------------------------------------------------------

    void removeLater(JdbcEntry entry) {
        this.removals.removeLater(entry);
    }

    /** @see JdbcEntryRemovals#awaitGivenUp */
    void awaitGivenUp(String lockId, Wait attempt) {
        this.removals.awaitGivenUp(lockId, attempt);
    }

    void removeBeforeReturning(JdbcEntry entry, Wait attempt) {
        this.removals.removeBeforeReturning(entry, attempt);
    }

    /** @return removals not yet confirmed by the database (nor made moot by the session's end) */
    int pendingRemovals() {
        return this.removals.pendingRemovals();
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
        return StoreCalls.connect(this, this.calls::execute, this.calls.where(), () -> {
            this.keeper.liveSession(Wait.timeout(this.calls.requestTimeoutNanos(), false));
            this.wakeups.ensureListening();
        });
    }

    /**
     * Deletes this store's session with every row of it (its entries, and rows nobody owns: writes
     * whose answer was lost, removals not yet confirmed), waking the waiters behind them, so its
     * locks are free at once; holds still open report themselves lost and waiters fail.
     * The {@link DataSource} stays open.
     */
    @Override
    public void close() {
        if (this.calls.isClosed()) {
            return;
        }
        this.calls.markClosed();
        JdbcSession current = this.keeper.sessionAtClose();
        if (current != null) {
            this.keeper.loseSession(current, "the lock registry was closed");
            try {
                StoreCalls.await(this.calls.submit((connection, tables) -> this.removals.deleteSession(connection,
                        tables, current.id, false)), Wait.timeout(this.calls.requestTimeoutNanos(), false),
                        "Deleting the session");
            }
            catch (StoreUnavailableException | InterruptedException ex) {
                logger.warn("Could not delete this registry's lock session from {} at close ({}); its locks are "
                        + "freed when it expires", this.calls.where(), ex.getMessage());
            }
        }
        this.wakeups.close();
        this.maintenance.shutdownNow();
        this.keeper.shutdownNow();
        this.calls.shutdownNow();
    }

    long ttlNanos() {
        return this.keeper.ttlNanos();
    }

    /** @return how long a session counts as alive after the send of its last acknowledged renewal */
    long livenessNanos() {
        return this.keeper.livenessNanos();
    }

    long pollIntervalNanos() {
        return this.wakeups.pollIntervalNanos();
    }

    /** @return whether LISTEN is in effect (PostgreSQL) */
    boolean isListening() {
        return this.wakeups.isListening();
    }

    long nextPollNanos() {
        return this.wakeups.nextPollNanos();
    }

    @Nullable JdbcSession session() {
        return this.keeper.session();
    }

    @Nullable JdbcTables tablesOrNull() {
        return this.calls.tablesOrNull();
    }

    @Override
    public String namespace() {
        return this.calls.tablePrefix();
    }

    /** @return the bytes of the escaped key, as {@code LOCK_KEY} keeps it */
    @Override
    public long keySize(String key) {
        return JdbcTables.escapedSize(key);
    }

    @Override
    public long maxKeySize() {
        return MAX_ESCAPED_KEY_BYTES;
    }

    @Override
    public long requestTimeoutNanos() {
        return this.calls.requestTimeoutNanos();
    }

    @Override
    public boolean isSessionAlive() {
        return this.keeper.isSessionAlive();
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        return this.keeper.sessionRenewalAge();
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
