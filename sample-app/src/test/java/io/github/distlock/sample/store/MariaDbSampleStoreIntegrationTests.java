package io.github.distlock.sample.store;

import io.github.distlock.jdbc.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link JdbcSampleStore} on a private MariaDB server: the table compares paths byte by byte
 * ({@code utf8mb4_bin}), where MariaDB's default collation would ignore case.
 */
class MariaDbSampleStoreIntegrationTests extends AbstractJdbcSampleStoreTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.MARIADB);
    }

    @AfterAll
    static void stopDatabase() {
        if (database != null) {
            database.close();
        }
    }

    @Override
    protected TestDatabase database() {
        return database;
    }
}
