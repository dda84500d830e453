package io.github.distlock.jdbc;

/** MariaDB failing under the locks. */
class MariaDbFaultIntegrationTests extends AbstractJdbcFaultIntegrationTests {

    @Override
    protected TestDatabase.Kind kind() {
        return TestDatabase.Kind.MARIADB;
    }
}
