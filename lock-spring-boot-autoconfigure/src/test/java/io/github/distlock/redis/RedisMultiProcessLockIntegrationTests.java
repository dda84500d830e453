package io.github.distlock.redis;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The multi-process guarantees on one redis-server. */
class RedisMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected TestStore openStore() {
        return TestStore.open("redis=" + redis.uri());
    }
}
