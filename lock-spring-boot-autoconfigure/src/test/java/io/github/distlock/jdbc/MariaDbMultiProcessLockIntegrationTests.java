package io.github.distlock.jdbc;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.DatabaseServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The multi-process guarantees on one MariaDB server (waiters poll). */
class MariaDbMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

    @RegisterExtension
    static final DatabaseServerExtension database = DatabaseServerExtension.mariaDb();

    @Override
    protected TestStore openStore() {
        return database.openStore();
    }
}
