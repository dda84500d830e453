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

    @Override
    DatabaseServer startServerWithSteppableClock() {
        return MariaDbServer.start(true);
    }

    @Override
    String clockQuery() {
        return "SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000";
    }
}
