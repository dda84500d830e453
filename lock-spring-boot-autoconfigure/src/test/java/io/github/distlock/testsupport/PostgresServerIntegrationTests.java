package io.github.distlock.testsupport;

/** {@link PostgresServer} against a real PostgreSQL server. */
class PostgresServerIntegrationTests extends AbstractDatabaseServerIntegrationTests {

    @Override
    DatabaseServer startServer() {
        return PostgresServer.start();
    }

    @Override
    String urlScheme() {
        return "jdbc:postgresql:";
    }

    @Override
    DatabaseServer startServerWithSteppableClock() {
        return PostgresServer.start(true);
    }

    @Override
    String clockQuery() {
        return "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";
    }
}
