package io.github.distlock.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The JDBC store against the store contract on H2. */
class H2LockStoreContractTests extends AbstractJdbcLockStoreContractTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.H2);
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
