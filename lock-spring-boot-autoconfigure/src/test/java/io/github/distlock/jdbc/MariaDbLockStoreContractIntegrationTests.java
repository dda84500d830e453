package io.github.distlock.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The JDBC store against the store contract on MARIADB. */
class MariaDbLockStoreContractIntegrationTests extends AbstractJdbcLockStoreContractTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.MARIADB);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @Override
    protected TestDatabase database() {
        return database;
    }
}
