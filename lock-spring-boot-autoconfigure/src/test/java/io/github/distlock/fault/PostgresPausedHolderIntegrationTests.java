package io.github.distlock.fault;

import io.github.distlock.testsupport.PostgresServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A paused holder on PostgreSQL: its session expires by the database's clock, another process takes over, the fence rejects the stale write. */
class PostgresPausedHolderIntegrationTests extends AbstractPausedHolderTests {

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
