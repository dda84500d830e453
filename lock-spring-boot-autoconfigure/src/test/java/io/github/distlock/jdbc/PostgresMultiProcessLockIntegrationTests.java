package io.github.distlock.jdbc;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.PostgresServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-process guarantees on one PostgreSQL server (waiters woken by LISTEN/NOTIFY). */
class PostgresMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

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
