package io.github.distlock.jdbc;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.MariaDbServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-process guarantees on one MariaDB server (waiters poll). */
class MariaDbMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

    private static MariaDbServer mariaDb;

    @BeforeAll
    static void startMariaDb() {
        mariaDb = MariaDbServer.start();
    }

    @AfterAll
    static void stopMariaDb() {
        mariaDb.close();
    }

    @Override
    protected TestStore openStore() {
        return TestStore.open(TestStore.jdbc(mariaDb));
    }
}
