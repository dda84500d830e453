package io.github.distlock.testsupport;

/** {@link MariaDbServer} against a real MariaDB server. */
class MariaDbServerIntegrationTests extends AbstractDatabaseServerIntegrationTests {

    @Override
    DatabaseServer startServer() {
        return MariaDbServer.start();
    }

    @Override
    String urlScheme() {
        return "jdbc:mariadb:";
    }
}
