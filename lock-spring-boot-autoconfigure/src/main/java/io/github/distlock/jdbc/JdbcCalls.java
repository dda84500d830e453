package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database as the parts of one {@link JdbcLockStore} reach it: statements run in short
 * transactions on connections borrowed from the application's {@link DataSource} for one call each
 * (a held lock pins no connection), every call run on the store's own threads so that the caller's
 * wait bounds it whatever the pool's connection timeout; deadlocks and serialization failures of a
 * write retried; what failures mean. Also the store's closed flag, which every part checks.
 */
final class JdbcCalls {

    private static final Logger logger = LoggerFactory.getLogger(JdbcCalls.class);

    /** Calls in flight at once, at most: more fail at once rather than pile up threads on a hung database. */
    private static final int MAX_CALLS = 256;

    /** A connection's network timeout is the request timeout plus this. */
    private static final long NETWORK_TIMEOUT_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final int NOT_SET = -1;

    /** A write is tried this often, within its bound, on deadlocks, serialization failures and fence collisions. */
    static final int WRITE_ATTEMPTS = 5;

    private final DataSource dataSource;

    private final String tablePrefix;

    private final long requestTimeoutNanos;

    private final String where;

    /** Every call but renewals. */
    private final ThreadPoolExecutor calls;

    private volatile @Nullable JdbcTables tables;

    private volatile boolean closed;

    /**
     * @param dialect the database's dialect, or {@code null} to learn it from the first connection
     * @param where the database, for messages
     */
    JdbcCalls(DataSource dataSource, String tablePrefix, @Nullable JdbcDialect dialect, Duration requestTimeout,
            String where) {
        this.dataSource = dataSource;
        this.tablePrefix = JdbcTables.normalize(tablePrefix);
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.where = where;
        this.calls = new ThreadPoolExecutor(0, MAX_CALLS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
                DaemonThreads.numbered("distlock-jdbc"));
        if (dialect != null) {
            this.tables = new JdbcTables(tablePrefix, dialect);
        }
    }

    /** Work on one borrowed connection. */
    @FunctionalInterface
    interface SqlWork<T> {

        T run(Connection connection, JdbcTables tables) throws SQLException;
    }

    /**
     * Runs {@code work} on a connection of the pool, on a thread of the store, and waits within {@code bound}.
     * @return the work's answer
     */
    <T> T call(SqlWork<T> work, Wait bound, String what) throws StoreUnavailableException, InterruptedException {
        return StoreCalls.await(submit(work), bound, what);
    }

    /** Runs {@code work} on a connection of the pool, on a thread of the store. @return its answer, to come */
    <T> CompletableFuture<T> submit(SqlWork<T> work) {
        CompletableFuture<T> answer = new CompletableFuture<>();
        try {
            this.calls.execute(() -> {
                try {
                    answer.complete(withConnection(work));
                }
                catch (SQLException | RuntimeException ex) {
                    answer.completeExceptionally(ex);
                }
            });
        }
        catch (RejectedExecutionException ex) {
            answer.completeExceptionally(new SQLException(this.closed ? "the lock registry is closed"
                    : "too many database calls of the lock registry in flight (" + MAX_CALLS + ")", ex));
        }
        return answer;
    }

    /**
     * Runs {@code task} on a thread of the store.
     * @throws RejectedExecutionException if the store's threads are shut down or all busy
     */
    void execute(Runnable task) {
        this.calls.execute(task);
    }

    /** Runs {@code work} on a connection of the pool, on the calling thread, committing if it opened a transaction. */
    <T> T withConnection(SqlWork<T> work) throws SQLException {
        try (Connection connection = this.dataSource.getConnection()) {
            JdbcTables current = tables(connection);
            boolean autoCommit = connection.getAutoCommit();
            if (!autoCommit) {
                // A pool that does not roll back on return may hand over an open transaction, whose
                // snapshot (InnoDB's read view) would hide entries committed since.
                connection.rollback();
            }
            int networkTimeout = boundNetworkReads(connection, current);
            T answer;
            try {
                answer = work.run(connection, current);
                if (!connection.getAutoCommit()) {
                    connection.commit();
                }
            }
            catch (SQLException | RuntimeException ex) {
                rollbackQuietly(connection);
                throw ex;
            }
            finally {
                // Each restore on its own: on a connection the driver closed (a network timeout), a failing
                // restore must neither hide the call's own failure nor skip the other restore.
                restoreAutoCommit(connection, autoCommit);
                if (networkTimeout != NOT_SET) {
                    restoreNetworkTimeout(connection, networkTimeout);
                }
            }
            return answer;
        }
        catch (SQLException ex) {
            throw explained(ex);
        }
    }

    /**
     * Lets a call's statements commit in the round trip that sends them (on PostgreSQL several
     * statements sent at once run as one implicit transaction): without autocommit the commit is a
     * round trip of its own, and a process that froze or lost its network before it would keep the
     * rows it locked (a key row, a released entry still visible as the holder) from every other
     * process until the server drops the connection, hours later. {@link #withConnection} puts the
     * pool's setting back.
     */
    static void autoCommitForOneRoundTrip(Connection connection) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.setAutoCommit(true);
        }
    }

    static void restoreAutoCommit(Connection connection, boolean autoCommit) {
        try {
            if (connection.getAutoCommit() != autoCommit) {
                connection.setAutoCommit(autoCommit);
            }
        }
        catch (SQLException ex) {
            logger.debug("Could not restore the connection's auto-commit: {}", ex.getMessage());
        }
    }

    /** Rolls back an open transaction, if any; a connection that failed is closed, and the pool drops it. */
    private static void rollbackQuietly(Connection connection) {
        try {
            if (connection.getAutoCommit()) {
                return;
            }
            connection.rollback();
        }
        catch (SQLException ex) {
            logger.debug("Rollback failed: {}", ex.getMessage());
        }
    }

    private JdbcTables tables(Connection connection) throws SQLException {
        JdbcTables current = this.tables;
        if (current == null) {
            JdbcDialect dialect = JdbcDialect.of(connection);
            current = new JdbcTables(this.tablePrefix, dialect);
            this.tables = current;
        }
        return current;
    }

    /**
     * Says what to do when the tables are missing, or the key table is an earlier version's without
     * {@code LAST_FENCE}, which every call would otherwise report in the database's words.
     */
    private SQLException explained(SQLException ex) {
        String state = ex.getSQLState();
        // 42P01 PostgreSQL; 42S02 MySQL, MariaDB and H2; H2 also 42S03 (with similar names) and 42S04 (empty database).
        if (state != null && (state.equals("42P01") || state.equals("42S02") || state.equals("42S03")
                || state.equals("42S04"))) {
            return new SQLException("The lock tables " + this.tablePrefix + "* are missing (" + ex.getMessage()
                    + "); create them with the schema script in the jar (io/github/distlock/jdbc/schema-*.sql) or set "
                    + "distributed-lock.jdbc.initialize-schema=always", state, ex);
        }
        String message = ex.getMessage();
        if (JdbcSchema.isMissingColumn(ex) && message != null && message.toUpperCase(Locale.ROOT).contains("LAST_FENCE")) {
            return new SQLException("The lock table " + this.tablePrefix + "LOCK_KEY has no column LAST_FENCE (" + message
                    + "): it was created by an earlier version; add the column with '"
                    + JdbcSchema.addLastFenceColumn(this.tablePrefix) + "' or set "
                    + "distributed-lock.jdbc.initialize-schema=always", state, ex);
        }
        return ex;
    }

    /**
     * Bounds every read from the database on this connection (so a store thread never hangs on a
     * dead server), on drivers that talk over a network: cheaper than a query timeout, which costs
     * a timer task per statement in PostgreSQL's driver. The caller's own bound is the future it
     * waits on; this one is a little longer.
     * @return the connection's previous network timeout, to put back before it returns to the pool,
     * or {@link #NOT_SET} (H2, whose statements carry query timeouts instead)
     */
    private int boundNetworkReads(Connection connection, JdbcTables tables) throws SQLException {
        if (tables.dialect() == JdbcDialect.H2) {
            return NOT_SET;
        }
        int previous = connection.getNetworkTimeout();
        connection.setNetworkTimeout(Runnable::run,
                (int) TimeUnit.NANOSECONDS.toMillis(this.requestTimeoutNanos + NETWORK_TIMEOUT_MARGIN_NANOS));
        return previous;
    }

    /** Puts the pool's setting back; a connection that timed out is closed already, and the pool drops it. */
    static void restoreNetworkTimeout(Connection connection, int networkTimeout) {
        try {
            connection.setNetworkTimeout(Runnable::run, networkTimeout);
        }
        catch (SQLException ex) {
            logger.debug("Could not restore the connection's network timeout: {}", ex.getMessage());
        }
    }

    PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        bound(statement);
        return statement;
    }

    /** H2 runs in the process or on a server without network timeouts: its statements carry a query timeout. */
    void bound(Statement statement) throws SQLException {
        JdbcTables current = this.tables;
        if (current != null && current.dialect() == JdbcDialect.H2) {
            statement.setQueryTimeout(queryTimeoutSeconds());
        }
    }

    private int queryTimeoutSeconds() {
        return (int) Math.max(1, TimeUnit.NANOSECONDS.toSeconds(this.requestTimeoutNanos + 999_999_999));
    }

    /**
     * Runs {@code work} in a transaction of its own, retried on deadlocks, serialization failures and
     * fence collisions.
     */
    static <T> T inTransaction(Connection connection, SqlWork<T> work, JdbcTables tables) throws SQLException {
        if (connection.getAutoCommit()) {
            connection.setAutoCommit(false);
        }
        for (int attempt = 1;; attempt++) {
            try {
                T answer = work.run(connection, tables);
                connection.commit();
                return answer;
            }
            catch (SQLException ex) {
                rollbackQuietly(connection);
                if (attempt >= WRITE_ATTEMPTS || !(isTransient(ex, tables.dialect()) || isFenceCollision(ex))) {
                    throw ex;
                }
            }
        }
    }

    /**
     * Runs statements sent at once that open a transaction of their own (the PostgreSQL statements
     * of {@link JdbcTables}, at READ COMMITTED). One that fails leaves those after it unrun and the
     * transaction open and aborted: it is rolled back here, before the connection serves anything else.
     */
    static void executeAtOnce(PreparedStatement statements) throws SQLException {
        try {
            statements.execute();
        }
        catch (SQLException ex) {
            try (Statement rollback = statements.getConnection().createStatement()) {
                rollback.execute("ROLLBACK");
            }
            catch (SQLException rollbackFailure) {
                // A connection that failed is closed, and the pool drops it.
                logger.debug("Rollback failed: {}", rollbackFailure.getMessage());
            }
            throw ex;
        }
    }

    /**
     * @return the next result set of statements sent at once, after the current result, skipping
     * update counts; {@code null} if none is left
     */
    static @Nullable ResultSet nextResultSet(Statement statements) throws SQLException {
        while (!statements.getMoreResults()) {
            if (statements.getUpdateCount() == -1) {
                return null;
            }
        }
        return statements.getResultSet();
    }

    /** Runs a lock-then-delete pair of statements in their transaction. @return the count the second one answered */
    static int countOfSecondStatement(PreparedStatement statements, String what) throws SQLException {
        executeAtOnce(statements);
        // The first result is the transaction's start; the lock's rows come next, then the count.
        ResultSet lock = nextResultSet(statements);
        ResultSet count = (lock != null) ? nextResultSet(statements) : null;
        if (count == null) {
            throw new SQLException("The " + what + " answered no count");
        }
        try (count) {
            return count.next() ? count.getInt(1) : 0;
        }
    }

    /** Deadlocks, serialization failures and (H2) two MERGEs racing to create one key row. */
    static boolean isTransient(SQLException ex, JdbcDialect dialect) {
        String state = ex.getSQLState();
        return state != null && (state.startsWith("40") || (dialect == JdbcDialect.H2 && state.equals("23505")));
    }

    /**
     * A unique violation, which on the write of an entry is its fence meeting another key's entry's:
     * both written in the same microsecond, or raised to the same value above their keys' entries.
     */
    static boolean isFenceCollision(SQLException ex) {
        String state = ex.getSQLState();
        // 23505 PostgreSQL and H2; MySQL and MariaDB report 23000 with error 1062.
        return state != null && (state.equals("23505") || (state.equals("23000") && ex.getErrorCode() == 1062));
    }

    static boolean isForeignKeyViolation(SQLException ex) {
        String state = ex.getSQLState();
        // 23503 PostgreSQL and H2 (a row still referenced), 23506 H2 (no parent row); MySQL and MariaDB
        // report 23000 with error 1452 (no parent row) or 1451 (a row still referenced).
        return state != null && (state.equals("23503") || state.equals("23506")
                || (state.equals("23000") && (ex.getErrorCode() == 1452 || ex.getErrorCode() == 1451)));
    }

    DataSource dataSource() {
        return this.dataSource;
    }

    /** @return the tables, once the dialect is known (configured, or learnt from the first connection) */
    @Nullable JdbcTables tablesOrNull() {
        return this.tables;
    }

    /** @return the prefix of the lock tables, normalized */
    String tablePrefix() {
        return this.tablePrefix;
    }

    long requestTimeoutNanos() {
        return this.requestTimeoutNanos;
    }

    /** @return the database, for messages */
    String where() {
        return this.where;
    }

    /** Marks the store closed; calls still run until {@link #shutdownNow()}, so that closing can clean up. */
    void markClosed() {
        this.closed = true;
    }

    boolean isClosed() {
        return this.closed;
    }

    void checkOpen() {
        if (this.closed) {
            throw new IllegalStateException("The JDBC lock registry on " + this.where + " is closed");
        }
    }

    /** Stops the store's call threads. */
    void shutdownNow() {
        this.calls.shutdownNow();
    }
}
