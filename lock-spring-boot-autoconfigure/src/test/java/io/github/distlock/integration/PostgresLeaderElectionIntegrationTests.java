package io.github.distlock.integration;

import io.github.distlock.testsupport.PostgresServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Leader election on PostgreSQL (the JDBC store): a crashed or frozen leader's session row expires
 * by the database's clock one lease TTL after its last renewal, and the first waiter that finds it
 * expired deletes it.
 */
class PostgresLeaderElectionIntegrationTests extends AbstractLeaderElectionTests {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        postgres.close();
    }

    @Override
    protected TestStore openStore() {
        return TestStore.open(TestStore.jdbc(postgres));
    }
}
