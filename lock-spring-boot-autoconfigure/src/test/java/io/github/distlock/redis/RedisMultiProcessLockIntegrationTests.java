package io.github.distlock.redis;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.RedisServer;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-process guarantees on one redis-server. */
class RedisMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

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
