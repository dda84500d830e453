package io.github.distlock.fault;

import io.github.distlock.testsupport.DatabaseServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A paused holder on PostgreSQL: its session expires by the database's clock, another process takes over, the fence rejects the stale write. */
class PostgresPausedHolderIntegrationTests extends AbstractPausedHolderTests {

    @RegisterExtension
    static final DatabaseServerExtension database = DatabaseServerExtension.postgres();

    @Override
    protected TestStore openStore() {
        return database.openStore();
    }
}
