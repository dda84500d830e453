package io.github.distlock.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The JDBC store against the store contract on PostgreSQL. */
class PostgresLockStoreContractIntegrationTests extends AbstractJdbcLockStoreContractTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
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
