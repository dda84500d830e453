package io.github.distlock.integration;

import io.github.distlock.testsupport.DatabaseServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leader election on PostgreSQL (the JDBC store): a crashed or frozen leader's session row expires
 * by the database's clock one lease TTL after its last renewal, and the first waiter that finds it
 * expired deletes it.
 */
class PostgresLeaderElectionIntegrationTests extends AbstractLeaderElectionTests {

    @RegisterExtension
    static final DatabaseServerExtension database = DatabaseServerExtension.postgres();

    @Override
    protected TestStore openStore() {
        return database.openStore();
    }
}
