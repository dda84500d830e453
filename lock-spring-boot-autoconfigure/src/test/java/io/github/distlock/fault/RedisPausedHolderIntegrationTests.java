package io.github.distlock.fault;

import io.github.distlock.testsupport.RedisServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A paused holder on Redis: its entry key expires, another process takes over, the fence rejects the stale write. */
class RedisPausedHolderIntegrationTests extends AbstractPausedHolderTests {

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start(false);
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @Override
    protected TestStore openStore() {
        return TestStore.open("redis=" + redis.uri());
    }
}
