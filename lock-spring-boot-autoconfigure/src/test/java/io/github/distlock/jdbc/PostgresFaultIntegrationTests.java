package io.github.distlock.jdbc;

/** PostgreSQL failing under the locks. */
class PostgresFaultIntegrationTests extends AbstractJdbcFaultIntegrationTests {

    @Override
    protected TestDatabase.Kind kind() {
        return TestDatabase.Kind.POSTGRESQL;
    }
}
