package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.core.Fences;
import io.github.distlock.core.LockCounters;
import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The JDBC store against the store contract: two stores with their own pools and sessions stand
 * for two processes. Subclasses say which database.
 */
abstract class AbstractJdbcLockStoreContractTests extends AbstractLockStoreContractTests {

    private static int prefixes;

    private JdbcLockStore store;

    private JdbcLockStore peerStore;

    private HikariDataSource pool;

    private HikariDataSource peerPool;

    /** @return the database of the test class */
    protected abstract TestDatabase database();

    @BeforeEach
    void openStores() {
        String prefix = "SC" + (++prefixes) + "_";
        database().createTables(prefix);
        this.pool = database().pool("store");
        this.peerPool = database().pool("peer");
        this.store = store(this.pool, prefix, "store");
        this.peerStore = store(this.peerPool, prefix, "peer");
    }

    private JdbcLockStore store(HikariDataSource dataSource, String prefix, String owner) {
        return new JdbcLockStore(dataSource, prefix, null, Duration.ofSeconds(6), Duration.ofSeconds(5), null, false, owner,
                database().kind() + " database", new LockCounters(), lossListener());
    }

    @AfterEach
    void closeStores() {
        this.store.close();
        this.peerStore.close();
        this.pool.close();
        this.peerPool.close();
    }

    @Override
    protected LockStore store() {
        return this.store;
    }

    @Override
    protected LockStore peerStore() {
        return this.peerStore;
    }

    @Override
    protected boolean endSessionBehindTheStoresBack(LockStore lockStore) throws Exception {
        // As an expiry would: the row is gone (with its entries), renewals find nothing.
        JdbcLockStore jdbcStore = (JdbcLockStore) lockStore;
        return database().execute("DELETE FROM " + jdbcStore.tablesOrNull().sessions + " WHERE SESSION_ID = '"
                + jdbcStore.session().id + "'") == 1;
    }

    @Override
    protected boolean endHoldBehindTheStoresBack(StoreEntry entry) throws Exception {
        // As an operator's DELETE of the entry's row would.
        JdbcEntry jdbcEntry = (JdbcEntry) entry;
        return database().execute("DELETE FROM " + jdbcEntry.store.tablesOrNull().entries + " WHERE FENCE = "
                + jdbcEntry.fence()) == 1;
    }

    @Override
    protected boolean loseHoldAheadOfTheBackend(StoreEntry entry) {
        // What the session does when its deadline passes before the backend expires it.
        ((AbstractStoreEntry) entry).lose("its session's deadline passed (by the test)", true);
        return true;
    }

    /**
     * A key table created by an earlier version has no {@code LAST_FENCE}: acquisitions fail with a
     * message that names the table, the column and the statement that adds it, until the schema
     * initialisation (which the auto-configuration runs when it may) adds it; it keeps the rows there
     * were, runs again without change, and the fences then go on above the key's last.
     */
    @Test
    void aKeyTableOfAnEarlierVersionIsNamedWithTheStatementToRunUntilTheSchemaAddsTheColumn() throws Exception {
        String prefix = "EARLIER" + (++prefixes) + "_";
        database().createTables(prefix);
        database().execute("ALTER TABLE " + prefix + "LOCK_KEY DROP COLUMN LAST_FENCE");
        database().execute("INSERT INTO " + prefix + "LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('"
                + JdbcTables.lockId("kept") + "', 'kept')");
        String statement = "ALTER TABLE " + prefix + "LOCK_KEY ADD COLUMN LAST_FENCE BIGINT NOT NULL DEFAULT 0";
        assertThat(JdbcSchema.addLastFenceColumn(prefix)).isEqualTo(statement);
        try (HikariDataSource earlier = database().pool("earlier", 4)) {
            try (JdbcLockRegistry registry = JdbcLockRegistry.builder(earlier).tablePrefix(prefix).build()) {
                FencedLock lock = registry.obtain("earlier-table");
                assertThatExceptionOfType(LockAcquisitionException.class)
                    .isThrownBy(() -> lock.tryLock(3, TimeUnit.SECONDS))
                    .withMessageContaining("The lock table " + prefix + "LOCK_KEY has no column LAST_FENCE")
                    .withMessageContaining("'" + statement + "'")
                    .withMessageContaining("distributed-lock.jdbc.initialize-schema=always");
            }
            // No registry runs on the prefix now, so no sweep deletes the idle row meanwhile.
            database().createTables(prefix);
            database().createTables(prefix);
            assertThat(database().queryLong("SELECT LAST_FENCE FROM " + prefix + "LOCK_KEY WHERE LOCK_ID = '"
                    + JdbcTables.lockId("kept") + "'")).as("a row of the earlier table, after the column came").isZero();
            try (JdbcLockRegistry registry = JdbcLockRegistry.builder(earlier).tablePrefix(prefix).build()) {
                FencedLock lock = registry.obtain("earlier-table");
                long last = 0;
                for (int i = 0; i < 3; i++) {
                    assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                    long fence = Fences.storeFence(lock.getFence());
                    lock.unlock();
                    assertThat(fence).isGreaterThan(last);
                    assertThat(database().queryLong("SELECT LAST_FENCE FROM " + prefix + "LOCK_KEY WHERE LOCK_ID = '"
                            + JdbcTables.lockId("earlier-table") + "'")).as("the key's last fence").isEqualTo(fence);
                    last = fence;
                }
            }
        }
    }

    /**
     * The sweep deletes the row of a key without entries only once its last fence is older than
     * {@link JdbcTables#IDLE_KEY_RETENTION} by the database's clock: a row that keeps an idle key's
     * next fence above its last stays for that long.
     */
    @Test
    void theSweepDeletesAnIdleKeysRowOnlyOnceItsLastFenceIsOlderThanTheRetention() throws Exception {
        String prefix = "IDLE" + (++prefixes) + "_";
        database().createTables(prefix);
        long nowMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        long retention = TimeUnit.NANOSECONDS.toMicros(JdbcTables.IDLE_KEY_RETENTION.toNanos());
        long hour = TimeUnit.HOURS.toMicros(1);
        String expired = JdbcTables.lockId("expired");
        String retained = JdbcTables.lockId("retained");
        database().execute("INSERT INTO " + prefix + "LOCK_KEY (LOCK_ID, LOCK_KEY, LAST_FENCE) VALUES ('" + expired
                + "', 'expired', " + (nowMicros - retention - hour) + "), ('" + retained + "', 'retained', "
                + (nowMicros - retention + hour) + ")");
        JdbcLockStore sweeper = store(this.pool, prefix, "sweeper");
        try {
            // Its first renewal's sweep deletes idle keys.
            sweeper.connect().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> database().queryLong("SELECT COUNT(*) FROM " + prefix
                    + "LOCK_KEY WHERE LOCK_ID = '" + expired + "'") == 0);
            JdbcTables tables = sweeper.tablesOrNull();
            try (HikariDataSource one = database().pool("sweep-check", 1); Connection connection = one.getConnection()) {
                List<String> found = new ArrayList<>();
                try (PreparedStatement find = connection.prepareStatement(tables.idleKeys)) {
                    find.setLong(1, retention);
                    try (ResultSet rows = find.executeQuery()) {
                        while (rows.next()) {
                            found.add(rows.getString(1));
                        }
                    }
                }
                assertThat(found).as("idle keys the sweep finds").isEmpty();
                try (PreparedStatement delete = connection.prepareStatement(tables.deleteIdleKeys)) {
                    List<String> ids = new ArrayList<>(Collections.nCopies(tables.idleKeysPerDelete, retained));
                    for (int i = 0; i < ids.size(); i++) {
                        delete.setString(i + 1, ids.get(i));
                    }
                    delete.setLong(ids.size() + 1, retention);
                    assertThat(delete.executeUpdate()).as("rows the sweep's delete takes of a retained key").isZero();
                    delete.setLong(ids.size() + 1, retention - 2 * hour);
                    assertThat(delete.executeUpdate()).as("with a retention that it is past").isOne();
                }
            }
        }
        finally {
            sweeper.close();
        }
    }
}
