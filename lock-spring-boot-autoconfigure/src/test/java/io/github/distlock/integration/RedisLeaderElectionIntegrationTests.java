package io.github.distlock.integration;

import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Leader election on Redis: a crashed or frozen leader's liveness keys expire one lease TTL after
 * its last renewal.
 */
class RedisLeaderElectionIntegrationTests extends AbstractLeaderElectionTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected TestStore openStore() {
        return TestStore.open("redis=" + redis.uri());
    }
}
