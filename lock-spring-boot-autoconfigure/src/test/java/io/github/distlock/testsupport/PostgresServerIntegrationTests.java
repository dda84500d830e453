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
}
