package io.github.distlock.redis;

import java.time.Duration;

import io.github.distlock.AbstractLockRegistryContractTests;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The registry contract against a real redis-server: {@link #registry()} and
 * {@link #peerRegistry()} use separate clients and sessions, as two processes would.
 */
class RedisLockRegistryContractIntegrationTests extends AbstractLockRegistryContractTests {

    private static final String NAMESPACE = "contract:";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisClient client;

    private static RedisClient peerClient;

    private static RedisClient rawClient;

    private static StatefulRedisConnection<String, String> raw;

    private static RedisLockRegistry registry;

    private static RedisLockRegistry peer;

    @BeforeAll
    static void startRegistries() {
        client = RedisClient.create(redis.uri());
        peerClient = RedisClient.create(redis.uri());
        rawClient = RedisClient.create(redis.uri());
        raw = rawClient.connect();
        registry = newRegistry(client, "registry");
        peer = newRegistry(peerClient, "peer");
    }

    private static RedisLockRegistry newRegistry(RedisClient redisClient, String owner) {
        // The TTL is far above responseTime(): an entry left behind would block the next waiter
        // for the rest of its TTL and fail the handoff bounds.
        return RedisLockRegistry.builder(redisClient)
            .namespace(NAMESPACE)
            .leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .description("Redis at " + redis.uri())
            .build();
    }

    @AfterAll
    static void closeRegistries() {
        registry.close();
        peer.close();
        raw.close();
        rawClient.shutdown();
        client.shutdown();
        peerClient.shutdown();
    }

    @Override
    protected LockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected int waitersQueued(String key) {
        return registry.queuedWaiters(key) + peer.queuedWaiters(key);
    }

    @Override
    protected void assertNoTracesLeft(String key) {
        RedisKeyspace names = registry.keyspace();
        await().atMost(responseTime()).untilAsserted(() -> {
            assertThat(raw.sync().exists(names.queue(key))).as("queue left in Redis for '%s'", key).isZero();
            // A release leaves a marker '<entry key>:r' for one TTL (so that a resent release still
            // counts as one); it delays nobody, unlike an entry key.
            assertThat(raw.sync().keys(names.entryPrefix(key).replace("{", "\\{").replace("}", "\\}") + "*"))
                .filteredOn(name -> !name.endsWith(":r"))
                .as("entry keys left in Redis for '%s'", key).isEmpty();
        });
    }

    @Override
    protected int contentionIterations() {
        return 100;
    }
}
