package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** Key sizes on PostgreSQL. */
class PostgresKeySizeIntegrationTests extends AbstractJdbcKeySizeTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.POSTGRESQL);
    }
}
