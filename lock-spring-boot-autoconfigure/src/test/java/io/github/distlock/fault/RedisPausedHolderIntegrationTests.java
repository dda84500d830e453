package io.github.distlock.fault;

import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A paused holder on Redis: its entry key expires, another process takes over, the fence rejects the stale write. */
class RedisPausedHolderIntegrationTests extends AbstractPausedHolderTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected TestStore openStore() {
        return TestStore.open("redis=" + redis.uri());
    }
}
