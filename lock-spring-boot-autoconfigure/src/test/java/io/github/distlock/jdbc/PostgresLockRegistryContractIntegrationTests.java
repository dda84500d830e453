package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** The registry contract on PostgreSQL. */
class PostgresLockRegistryContractIntegrationTests extends AbstractJdbcLockRegistryContractTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.POSTGRESQL);
    }
}
