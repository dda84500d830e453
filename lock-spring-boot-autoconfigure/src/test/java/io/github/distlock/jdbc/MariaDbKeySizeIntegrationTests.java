package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** Key sizes on MariaDB. */
class MariaDbKeySizeIntegrationTests extends AbstractJdbcKeySizeTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.MARIADB);
    }
}
