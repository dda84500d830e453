package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** The registry contract on MARIADB. */
class MariaDbLockRegistryContractIntegrationTests extends AbstractJdbcLockRegistryContractTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.MARIADB);
    }
}
