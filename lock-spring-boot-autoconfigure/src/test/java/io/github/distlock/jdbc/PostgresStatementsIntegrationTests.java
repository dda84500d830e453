package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.core.Fences;
import io.github.distlock.store.EntryValue;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What the PostgreSQL statements of the store rely on: several statements sent in one call run in
 * one transaction (the write of an entry and the release each send theirs at once, and the key
 * row's lock must last until the last statement ran), each with a snapshot of its own; the
 * statement that takes the key row's lock holds it until the transaction ends, also where the row
 * exists and is not rewritten.
 */
class PostgresStatementsIntegrationTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @Test
    void statementsSentInOneCallRunInOneTransactionEvenWithAutoCommit() throws Exception {
        HikariDataSource pool = database.pool("statements", 1);
        try (Connection connection = pool.getConnection()) {
            assertThat(connection.getAutoCommit()).isTrue();
            try (PreparedStatement both = connection.prepareStatement(
                    "SELECT txid_current(), ?::TEXT; SELECT txid_current(), statement_timestamp()")) {
                both.setString(1, "first");
                assertThat(both.execute()).isTrue();
                long first;
                try (ResultSet rows = both.getResultSet()) {
                    rows.next();
                    first = rows.getLong(1);
                }
                assertThat(both.getMoreResults()).isTrue();
                try (ResultSet rows = both.getResultSet()) {
                    rows.next();
                    assertThat(rows.getLong(1)).as("the second statement's transaction").isEqualTo(first);
                }
            }
            try (PreparedStatement next = connection.prepareStatement("SELECT txid_current()");
                    ResultSet rows = next.executeQuery()) {
                rows.next();
                assertThat(rows.getLong(1)).as("a later call's transaction").isGreaterThan(0);
            }
        }
    }

    @Test
    void theKeyRowStatementLocksAnExistingRowUntilTheTransactionEndsWithoutWritingANewVersion() throws Exception {
        HikariDataSource pool = database.pool("key-row", 2);
        JdbcSchema.initialize(pool, "KEY_ROW_");
        JdbcTables tables = new JdbcTables("KEY_ROW_", JdbcDialect.POSTGRESQL);
        String lockId = JdbcTables.lockId("orders");
        try (Connection holder = pool.getConnection(); Connection other = pool.getConnection()) {
            lockKeyRow(holder, tables, lockId);
            long created = rowVersion(other, tables, lockId);
            holder.setAutoCommit(false);
            lockKeyRow(holder, tables, lockId);
            try (Statement statement = other.createStatement()) {
                statement.execute("SET lock_timeout = '200ms'");
                assertThatExceptionOfType(SQLException.class).isThrownBy(() -> lockKeyRow(other, tables, lockId))
                    .satisfies(ex -> assertThat(ex.getSQLState()).as("lock not available").isEqualTo("55P03"));
                holder.commit();
                assertThat(rowVersion(other, tables, lockId)).as("the row's version after a transaction locked it")
                    .isEqualTo(created);
                lockKeyRow(other, tables, lockId);
                statement.execute("RESET lock_timeout");
            }
        }
        finally {
            pool.close();
        }
    }

    /**
     * Above READ COMMITTED a transaction's snapshot is taken at its first statement, before the key
     * row's lock is granted, so the head read after the insert would miss an entry committed while
     * the write waited for that lock, and two entries would hold. The registry's writes run at READ
     * COMMITTED whatever the pool's level.
     */
    @Test
    void aWriteOnAPoolAtRepeatableReadSeesAnEntryCommittedWhileItWaitedForTheKeyRow() throws Exception {
        HikariDataSource plain = database.pool("repeatable-read-raw", 6);
        JdbcSchema.initialize(plain, "REPEATABLE_");
        assertAWriteSeesAnEntryCommittedWhileItWaitedForTheKeyRow(plain, "REPEATABLE_",
                database.poolAt("TRANSACTION_REPEATABLE_READ", "repeatable-read"), () -> {
                });
    }

    /**
     * As above, where only connections handed out later run at REPEATABLE READ (here those of a
     * role whose default it is; a pool that does not reset a level the application set does the
     * same): the level is no property of the pool, which its first connection would tell, but of
     * each transaction.
     */
    @Test
    void aWriteOnALaterConnectionOfARoleAtRepeatableReadSeesAnEntryCommittedWhileItWaitedForTheKeyRow()
            throws Exception {
        HikariDataSource plain = database.pool("role-raw", 6);
        JdbcSchema.initialize(plain, "ROLE_DEFAULT_");
        database.execute("CREATE ROLE repeatable LOGIN PASSWORD 'repeatable'");
        database.execute("ALTER ROLE repeatable SET default_transaction_isolation = 'repeatable read'");
        database.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO repeatable");
        database.execute("GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO repeatable");
        HikariDataSource role = database.poolAs("repeatable", "repeatable", "role-repeatable");
        try (Connection connection = role.getConnection(); Statement statement = connection.createStatement();
                ResultSet level = statement.executeQuery("SHOW transaction_isolation")) {
            level.next();
            assertThat(level.getString(1)).isEqualTo("repeatable read");
        }
        AtomicBoolean later = new AtomicBoolean();
        assertAWriteSeesAnEntryCommittedWhileItWaitedForTheKeyRow(plain, "ROLE_DEFAULT_",
                JdbcProxies.switching(database.pool("role-first", 4), role, later::get), () -> later.set(true));
    }

    /**
     * A waiter's write waits for the key row, which the test holds while it commits another
     * process's entry of the key: the waiter must not hold.
     * @param plain a pool at the default level, for the holder and the test's own statements
     * @param prefix the prefix of tables created with {@code plain}
     * @param waiterPool the waiter's pool
     * @param connected runs once the waiter's registry has connected
     */
    private static void assertAWriteSeesAnEntryCommittedWhileItWaitedForTheKeyRow(HikariDataSource plain,
            String prefix, DataSource waiterPool, Runnable connected) throws Exception {
        JdbcTables tables = new JdbcTables(prefix, JdbcDialect.POSTGRESQL);
        String lockId = JdbcTables.lockId("orders");
        ExecutorService background = Executors.newSingleThreadExecutor();
        // A long TTL: the holder's renewal, which would delete the entry written by hand below, comes after the test.
        try (JdbcLockRegistry holder = JdbcLockRegistry.builder(plain).tablePrefix(prefix)
            .ownerIdentity("holder").leaseTtl(Duration.ofSeconds(60)).build();
                JdbcLockRegistry waiter = JdbcLockRegistry.builder(waiterPool).tablePrefix(prefix)
                    .ownerIdentity("waiter").build();
                Connection raw = plain.getConnection()) {
            FencedLock first = holder.obtain("orders", true);
            first.lock();
            first.unlock();
            waiter.connect().get(30, TimeUnit.SECONDS);
            connected.run();
            String holderSession;
            try (Statement statement = raw.createStatement();
                    ResultSet row = statement.executeQuery("SELECT SESSION_ID FROM " + tables.sessions)) {
                assertThat(row.next()).as("the holder's session").isTrue();
                holderSession = row.getString(1);
            }
            raw.setAutoCommit(false);
            lockKeyRow(raw, tables, lockId);
            Future<Boolean> acquired = background.submit(() -> {
                FencedLock lock = waiter.obtain("orders", true);
                boolean held = lock.tryLock(2, TimeUnit.SECONDS);
                if (held) {
                    lock.unlock();
                }
                return held;
            });
            try (Connection observer = plain.getConnection(); Statement statement = observer.createStatement()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    try (ResultSet row = statement.executeQuery("SELECT COUNT(*) FROM pg_locks WHERE NOT granted")) {
                        row.next();
                        return row.getInt(1) > 0;
                    }
                });
            }
            // Another process's entry, committed while the waiter's write waits for the key row.
            try (PreparedStatement insert = raw.prepareStatement(tables.insertEntryAtReservedFence)) {
                // At the fence of the key's row: the key's last fence, which the waiter's write must go above.
                insert.setString(1, lockId);
                insert.setString(2, lockId);
                insert.setString(3, holderSession);
                insert.setLong(4, 1_000_000);
                insert.setString(5, EntryValue.encode("holder", "by hand", System.currentTimeMillis()));
                insert.executeUpdate();
            }
            raw.commit();
            assertThat(acquired.get(30, TimeUnit.SECONDS)).as("the waiter held while an older live entry was queued")
                .isFalse();
        }
        finally {
            background.shutdownNow();
        }
    }

    /**
     * An entry table of an earlier version numbers its fences with an identity column, which a
     * failover or a restore can rewind: the schema script turns it into a column that the clock
     * fills (instances of earlier versions then fail rather than take fences from the identity),
     * keeps its entries, and runs from several instances at once. While another transaction holds
     * the table, it leaves the column for a later run within its lock timeout instead of queueing
     * every lock call behind its own lock.
     */
    @Test
    void theScriptTurnsTheIdentityOfAnEarlierVersionsEntryTableIntoTheClock() throws Exception {
        HikariDataSource pool = database.pool("identity", 6);
        JdbcSchema.initialize(pool, "IDENTITY_");
        database.execute("ALTER TABLE IDENTITY_ENTRY ALTER COLUMN FENCE DROP DEFAULT");
        database.execute("ALTER TABLE IDENTITY_ENTRY ALTER COLUMN FENCE ADD GENERATED BY DEFAULT AS IDENTITY");
        database.execute("INSERT INTO IDENTITY_SESSION VALUES ('earlier', 'earlier version', 9000000000000000, 1000)");
        database.execute("INSERT INTO IDENTITY_LOCK_KEY VALUES ('" + JdbcTables.lockId("orders") + "', 'orders')");
        database.execute("INSERT INTO IDENTITY_ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) VALUES ('"
                + JdbcTables.lockId("orders") + "', 'earlier', 1, 'earlier version')");
        String identity = "SELECT COUNT(*) FROM pg_attribute WHERE attrelid = 'identity_entry'::regclass "
                + "AND attname = 'fence' AND attidentity <> ''";

        try (Connection other = pool.getConnection(); Statement statement = other.createStatement()) {
            other.setAutoCommit(false);
            statement.execute("LOCK TABLE IDENTITY_ENTRY IN ACCESS SHARE MODE");
            long start = System.nanoTime();
            JdbcSchema.initialize(pool, "IDENTITY_");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(database.queryLong(identity)).as("identity columns left while the table was held").isOne();
            other.rollback();
        }

        ExecutorService instances = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                runs.add(instances.submit(() -> JdbcSchema.initialize(pool, "IDENTITY_")));
            }
            for (Future<?> run : runs) {
                run.get(60, TimeUnit.SECONDS);
            }
        }
        finally {
            instances.shutdownNow();
        }
        assertThat(database.queryLong(identity)).as("identity columns left").isZero();
        long before = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        database.execute("INSERT INTO IDENTITY_ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) VALUES ('"
                + JdbcTables.lockId("orders") + "', 'earlier', 2, 'by hand')");
        assertThat(database.queryLong("SELECT FENCE FROM IDENTITY_ENTRY WHERE ENTRY_NUMBER = 2"))
            .as("the fence of a row written without one").isGreaterThanOrEqualTo(before);
        database.execute("DELETE FROM IDENTITY_SESSION");
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix("IDENTITY_").build()) {
            FencedLock lock = registry.obtain("orders", true);
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(Fences.storeFence(lock.getFence())).isGreaterThanOrEqualTo(before);
            lock.unlock();
        }
    }

    private static void lockKeyRow(Connection connection, JdbcTables tables, String lockId) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(tables.lockKeyRow)) {
            statement.setString(1, lockId);
            statement.setString(2, "orders");
            statement.executeUpdate();
        }
    }

    /** @return the transaction that wrote the row's current version */
    private static long rowVersion(Connection connection, JdbcTables tables, String lockId) throws SQLException {
        try (PreparedStatement statement = connection
            .prepareStatement("SELECT xmin::TEXT::BIGINT FROM " + tables.keys + " WHERE LOCK_ID = ?")) {
            statement.setString(1, lockId);
            try (ResultSet row = statement.executeQuery()) {
                assertThat(row.next()).as("the key's row").isTrue();
                return row.getLong(1);
            }
        }
    }

    /**
     * A release commits without waiting for its flush in its own transaction only: its connection
     * goes back to the pool committing as the server says, so the application's transactions on it
     * stay durable.
     */
    @Test
    void aReleaseLeavesItsConnectionCommittingSynchronously() throws Exception {
        database.createTables("ASYNC_RELEASE_");
        // Two connections: LISTEN keeps one, so the release runs on the other, which the test then gets.
        HikariDataSource pool = database.pool("async-release", 2);
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix("ASYNC_RELEASE_").build()) {
            FencedLock lock = registry.obtain("orders");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(30)).until(registry::isListening);
            lock.unlock();
            try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement();
                    ResultSet setting = statement.executeQuery("SHOW synchronous_commit")) {
                setting.next();
                assertThat(setting.getString(1)).isEqualTo("on");
            }
        }
    }

    /**
     * On a pool without auto-commit a release still commits in the round trip that deletes: a
     * process that froze after sending it (here, one whose commit never comes) keeps nothing
     * locked, and another process takes the key.
     */
    @Test
    void aReleaseOnAPoolWithoutAutoCommitLeavesNothingLockedForACommitThatNeverComes() throws Exception {
        database.createTables("MANUAL_COMMIT_");
        HikariDataSource manual = database.poolWithoutAutoCommit("manual-commit");
        AtomicBoolean commitsHang = new AtomicBoolean();
        CountDownLatch testDone = new CountDownLatch(1);
        DataSource frozenAtCommit = JdbcProxies.connectionsCalling(manual, hangingAtCommit(commitsHang, testDone));
        ExecutorService releaser = Executors.newSingleThreadExecutor();
        try (JdbcLockRegistry frozen = JdbcLockRegistry.builder(frozenAtCommit).tablePrefix("MANUAL_COMMIT_")
            .ownerIdentity("frozen").build();
                JdbcLockRegistry other = JdbcLockRegistry.builder(database.pool("manual-commit-other", 2))
                    .tablePrefix("MANUAL_COMMIT_").ownerIdentity("other").build()) {
            FencedLock held = frozen.obtain("orders", true);
            Future<?> released = releaser.submit(() -> {
                assertThat(held.tryLock(10, TimeUnit.SECONDS)).isTrue();
                commitsHang.set(true);
                held.unlock();
                return null;
            });
            FencedLock next = other.obtain("orders", true);
            await().atMost(Duration.ofSeconds(30)).until(commitsHang::get);
            assertThat(next.tryLock(20, TimeUnit.SECONDS)).as("taken by the other process").isTrue();
            next.unlock();
            released.get(30, TimeUnit.SECONDS);
        }
        finally {
            testDone.countDown();
            releaser.shutdownNow();
        }
    }

    /**
     * A renewal on a pool without auto-commit commits with its update: a process that froze
     * before a separate commit would keep its session row locked, and a waiter could never delete
     * the session once it expired.
     */
    @Test
    void aRenewalOnAPoolWithoutAutoCommitLeavesItsSessionRowUnlocked() throws Exception {
        database.createTables("MANUAL_RENEWAL_");
        HikariDataSource manual = database.poolWithoutAutoCommit("manual-renewal");
        AtomicBoolean commitsHang = new AtomicBoolean();
        CountDownLatch testDone = new CountDownLatch(1);
        DataSource frozenAtCommit = JdbcProxies.connectionsCalling(manual, hangingAtCommit(commitsHang, testDone));
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(frozenAtCommit).tablePrefix("MANUAL_RENEWAL_")
            .leaseTtl(Duration.ofSeconds(3)).build()) {
            registry.connect().get(30, TimeUnit.SECONDS);
            JdbcSession session = registry.jdbc().session();
            long startedAt = session.renewedAt();
            commitsHang.set(true);
            // A renewal was acknowledged (renewals come every second): its update ran, and committed.
            await().atMost(Duration.ofSeconds(10)).until(() -> session.renewedAt() != startedAt);
            try (Connection raw = database.pool("manual-renewal-raw", 1).getConnection();
                    Statement statement = raw.createStatement()) {
                raw.setAutoCommit(false);
                statement.execute("SET lock_timeout = '1s'");
                statement.executeQuery("SELECT SESSION_ID FROM MANUAL_RENEWAL_SESSION FOR UPDATE").close();
                raw.rollback();
            }
        }
        finally {
            testDone.countDown();
        }
    }

    /**
     * The deletion of a session notifies, for each key whose oldest entry was the session's, the
     * key's oldest entry of another session, and nothing else; the deletion of an expired session
     * deletes and notifies nothing while the session is alive.
     */
    @Test
    void theDeletionOfASessionNotifiesTheNextEntryOfEachKeyItHeadedOnly() throws Exception {
        String prefix = "SESSION_DELETE_";
        database.createTables(prefix);
        JdbcTables tables = new JdbcTables(prefix, JdbcDialect.POSTGRESQL);
        database.execute("INSERT INTO " + tables.sessions + " (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) VALUES "
                + "('dying', 'test', 9000000000000, 1), ('other', 'test', 9000000000000, 1)");
        // Per key, its entries oldest first: (session, fence).
        String[][] queues = {
            { "dying:101", "other:102" },
            { "other:103", "dying:104" },
            { "dying:105", "dying:106", "other:107" },
            { "dying:108" },
            { "dying:109", "other:110", "other:111" } };
        for (int key = 0; key < queues.length; key++) {
            String lockId = JdbcTables.lockId("key-" + key);
            database.execute("INSERT INTO " + tables.keys + " (LOCK_ID, LOCK_KEY) VALUES ('" + lockId + "', 'key-" + key
                    + "')");
            for (String entry : queues[key]) {
                String[] sessionAndFence = entry.split(":");
                database.execute("INSERT INTO " + tables.entries + " (FENCE, LOCK_ID, SESSION_ID, ENTRY_NUMBER, "
                        + "ENTRY_VALUE) VALUES (" + sessionAndFence[1] + ", '" + lockId + "', '" + sessionAndFence[0]
                        + "', " + sessionAndFence[1] + ", 'test')");
            }
        }
        HikariDataSource pool = database.pool("session-delete", 2);
        try (Connection listener = pool.getConnection(); Connection deleter = pool.getConnection()) {
            try (Statement listen = listener.createStatement()) {
                listen.execute("LISTEN \"" + tables.channel + "\"");
            }
            assertThat(deleteSession(deleter, tables, tables.deleteExpiredSessionAndNotify)).as("alive: kept")
                .isZero();
            assertThat(deleteSession(deleter, tables, tables.deleteSessionAndNotify)).isOne();
            List<String> notified = new ArrayList<>();
            PGConnection notifications = listener.unwrap(PGConnection.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (notified.size() < 3 && System.nanoTime() - deadline < 0) {
                receive(notifications, notified);
            }
            // Any notification more would have come with the others, at the commit.
            receive(notifications, notified);
            assertThat(notified).containsExactlyInAnyOrder("102", "107", "110");
        }
        assertThat(database.queryLong("SELECT COUNT(*) FROM " + tables.entries + " WHERE SESSION_ID = 'dying'"))
            .isZero();
    }

    /** Waits up to half a second for notifications, and adds their payloads to {@code payloads}. */
    private static void receive(PGConnection listener, List<String> payloads) throws SQLException {
        PGNotification[] received = listener.getNotifications(500);
        if (received != null) {
            for (PGNotification notification : received) {
                payloads.add(notification.getParameter());
            }
        }
    }

    /** @return the sessions the statement deleted ('dying', with {@code tables}' channel) */
    private static int deleteSession(Connection connection, JdbcTables tables, String statement) throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement(statement)) {
            delete.setString(1, "dying");
            delete.setString(2, "dying");
            delete.setString(3, tables.channel);
            return JdbcCalls.countOfSecondStatement(delete, "deletion of a session");
        }
    }

    /** Commits never return while {@code commitsHang} is set, until the test is done: a process frozen before them. */
    private static JdbcProxies.BeforeCall hangingAtCommit(AtomicBoolean commitsHang, CountDownLatch testDone) {
        return (method, args) -> {
            if (method.getName().equals("commit") && commitsHang.get()) {
                testDone.await();
            }
        };
    }
}
