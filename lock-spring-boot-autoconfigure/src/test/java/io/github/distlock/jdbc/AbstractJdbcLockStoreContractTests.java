package io.github.distlock.jdbc;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.core.LockStatistics;
import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

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
                database().kind() + " database", LockStatistics.recorder(), lossListener());
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
}
