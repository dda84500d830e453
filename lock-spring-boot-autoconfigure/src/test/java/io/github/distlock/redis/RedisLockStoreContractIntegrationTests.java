package io.github.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.github.distlock.core.LockCounters;
import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.testsupport.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Redis store against the store contract, on a real redis-server: two stores with their own
 * clients and sessions stand for two processes.
 */
class RedisLockStoreContractIntegrationTests extends AbstractLockStoreContractTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisClient client;

    private static RedisClient peerClient;

    private static StatefulRedisConnection<String, String> raw;

    private RedisLockStore store;

    private RedisLockStore peerStore;

    @BeforeAll
    static void startRedis() {
        client = RedisClient.create(redis.uri());
        peerClient = RedisClient.create(redis.uri());
        raw = RedisClient.create(redis.uri()).connect();
    }

    @AfterAll
    static void stopRedis() {
        raw.close();
        client.shutdown();
        peerClient.shutdown();
    }

    @BeforeEach
    void openStores() {
        RedisKeyspace keyspace = new RedisKeyspace("store-contract-" + UUID.randomUUID() + ":");
        this.store = store(client, keyspace, "store");
        this.peerStore = store(peerClient, keyspace, "peer");
    }

    private RedisLockStore store(RedisClient redisClient, RedisKeyspace keyspace, String owner) {
        return new RedisLockStore(redisClient, keyspace, Duration.ofSeconds(6), Duration.ofSeconds(5), owner,
                "Redis at " + redis.uri(), new LockCounters(), lossListener());
    }

    @AfterEach
    void closeStores() {
        this.store.close();
        this.peerStore.close();
    }

    @Override
    protected LockStore store() {
        return this.store;
    }

    @Override
    protected LockStore peerStore() {
        return this.peerStore;
    }

    @Override
    protected boolean endSessionBehindTheStoresBack(LockStore lockStore) {
        // As an expiry would: the session key and every entry key of the session vanish.
        RedisLockStore redisStore = (RedisLockStore) lockStore;
        RedisSession session = redisStore.session();
        List<String> keys = raw.sync().keys(redisStore.keyspace().namespace() + "*:e:" + session.id + "-*");
        raw.sync().del(session.key);
        keys.forEach(key -> raw.sync().del(key));
        return true;
    }

    @Override
    protected boolean endHoldBehindTheStoresBack(StoreEntry entry) {
        // As an operator's redis-cli DEL of the entry's key would.
        return raw.sync().del(((RedisEntry) entry).entryKey()) == 1;
    }

    @Override
    protected boolean loseHoldAheadOfTheBackend(StoreEntry entry) {
        // What the session does when its deadline passes before the backend expires it.
        ((AbstractStoreEntry) entry).lose("its session's deadline passed (by the test)", true);
        return true;
    }
}
