package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.distlock.AbstractKeySizeLimitTests;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.RedisServerExtension;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Key sizes on a real redis-server: the common start of a lock's names is limited to 1 MiB, far
 * below Redis's 512 MB per name, since a script call carries a key's names four times on the
 * connection every hold of the registry shares.
 */
class RedisKeySizeIntegrationTests extends AbstractKeySizeLimitTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisClient client;

    private static RedisClient peerClient;

    private static RedisLockRegistry registry;

    private static RedisLockRegistry peer;

    @BeforeAll
    static void startRegistries() {
        client = RedisClient.create(redis.uri());
        peerClient = RedisClient.create(redis.uri());
        registry = newRegistry(client, "registry");
        peer = newRegistry(peerClient, "peer");
    }

    private static RedisLockRegistry newRegistry(RedisClient redisClient, String owner) {
        return RedisLockRegistry.builder(redisClient).namespace("key-size:").leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner).description("Redis at " + redis.uri()).build();
    }

    @AfterAll
    static void closeRegistries() {
        registry.close();
        peer.close();
        client.shutdown();
        peerClient.shutdown();
    }

    @Override
    protected InspectableLockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected long limit() {
        return 1024 * 1024;
    }

    /** The queue's name without its {@code :q}: the common start of the lock's names. */
    @Override
    protected long sizeOf(String key) {
        return registry.keyspace().queue(key).getBytes(StandardCharsets.UTF_8).length - ":q".length();
    }
}
