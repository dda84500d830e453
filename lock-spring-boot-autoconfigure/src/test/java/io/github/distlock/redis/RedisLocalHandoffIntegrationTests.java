package io.github.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.distlock.AbstractLocalHandoffIntegrationTests;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.RedisServerExtension;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs on Redis: the scripts' answers and messages tell a holder when another process
 * queues behind it; a holder whose subscription came back assumes someone did.
 */
class RedisLocalHandoffIntegrationTests extends AbstractLocalHandoffIntegrationTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisClient client;

    private static StatefulRedisConnection<String, String> raw;

    private final List<RedisLockRegistry> registries = new CopyOnWriteArrayList<>();

    private final List<RedisClient> clients = new CopyOnWriteArrayList<>();

    private String namespace;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(redis.uri());
        raw = client.connect();
    }

    @AfterAll
    static void disconnect() {
        raw.close();
        client.shutdown();
    }

    @BeforeEach
    void newNamespace() {
        this.namespace = "handoff-" + UUID.randomUUID() + ":";
    }

    @AfterEach
    void closeRegistries() {
        this.registries.forEach(RedisLockRegistry::close);
        this.clients.forEach(RedisClient::shutdown);
    }

    @Override
    protected RedisLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        // A client of its own, as another process would have: killing one's subscription leaves the others'.
        RedisClient own = RedisClient.create(redis.uri());
        this.clients.add(own);
        RedisLockRegistry registry = RedisLockRegistry.builder(own)
            .namespace(this.namespace)
            // Renewed every 30 s: only the message of the script that drops a vanished entry from its
            // queue can tell its process within the 10 s the loss test allows.
            .leaseTtl(Duration.ofSeconds(90))
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .build();
        this.registries.add(registry);
        return registry;
    }

    /** Deletes the entries' liveness keys, as {@code DEL} by hand would; the ids stay in the queue. */
    @Override
    protected void deleteEntriesBehindTheRegistrysBack(String key) {
        String prefix = new RedisKeyspace(this.namespace).entryPrefix(key);
        String[] entryKeys = entries(key).stream().map((id) -> prefix + id).toArray(String[]::new);
        assertThat(raw.sync().del(entryKeys)).as("liveness keys deleted").isEqualTo(entryKeys.length);
    }

    /** The ids in the key's queue: a new entry has a new id. */
    @Override
    protected List<String> entries(String key) {
        return raw.sync().zrange(new RedisKeyspace(this.namespace).queue(key), 0, -1);
    }

    /** Messages published while a subscription was down are lost: its holders assume someone queued. */
    @Test
    void aLingeringEntryGoesBackWhenItsSubscriptionReconnects() throws Exception {
        RedisLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        raw.sync().clientKill(KillArgs.Builder.typePubsub());
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
        assertThat(registry.getStatistics().getHoldsLost()).isZero();
        FencedLock again = registry.obtain(this.key);
        // Waits: the release thread may still hold the key's gate while the give-back's answer comes in.
        assertThat(again.tryLock(LONG.toMillis(), MILLISECONDS)).as("the key after the entry went back").isTrue();
        try {
            assertThat(Fences.pass(again.getFence())).as("a new entry, not a pass of the one given back").isZero();
        }
        finally {
            again.unlock();
        }
    }

    /**
     * A new registry's first entry lingers: the confirmation of its first subscription, which
     * Lettuce may deliver after the entry was written, does not count as lost messages. Many
     * registries, so that the race shows (it did in about 7 of 100 before).
     */
    @Test
    void theFirstEntryOfANewRegistryLingers() throws Exception {
        for (int i = 0; i < 100; i++) {
            RedisLockRegistry registry = newRegistry("fresh-" + i, new LocalHandoff(FOREVER, FOREVER));
            lockUntilLingering(registry, this.key + "-fresh-" + i);
            registry.close();
        }
    }

    /**
     * Not surely: the try-once's write ends the linger (its message reaches the lingering process),
     * and the handover that follows can reach the try-once before it looks for the last time; it
     * then holds. Seen once in CI, on a loaded machine.
     */
    @Override
    protected boolean tryOnceFindsTheLingeringEntry() {
        return false;
    }
}
