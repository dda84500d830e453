package io.github.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs of unfair locks on Redis: a kept entry costs no Redis call, and the scripts' answers
 * and messages tell a holder when another process queues behind it, which ends a linger at once.
 * Every linger here is far beyond the tests' bounds, so only that signal can end it in time.
 */
class RedisLocalHandoffIntegrationTests {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final Duration LONG = Duration.ofSeconds(30);

    /** Far beyond any test's bound: a test that waits for it fails. */
    private static final Duration FOREVER = Duration.ofMinutes(10);

    private static RedisClient client;

    private static StatefulRedisConnection<String, String> raw;

    private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "redis-handoff-test");
        thread.setDaemon(true);
        return thread;
    });

    private final List<RedisLockRegistry> registries = new CopyOnWriteArrayList<>();

    private final List<RedisClient> clients = new CopyOnWriteArrayList<>();

    private String namespace;

    private String key;

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
    void setUp(TestInfo test) {
        this.namespace = "handoff-" + UUID.randomUUID() + ":";
        this.key = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(LONG.toMillis(), MILLISECONDS);
        this.registries.forEach(RedisLockRegistry::close);
        this.clients.forEach(RedisClient::shutdown);
    }

    private RedisLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        // A client of its own, as another process would have: killing one's subscription leaves the others'.
        RedisClient own = RedisClient.create(redis.uri());
        this.clients.add(own);
        RedisLockRegistry registry = RedisLockRegistry.builder(own)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .build();
        this.registries.add(registry);
        return registry;
    }

    @Test
    void aLingeringEntryServesTheNextAcquisitionWithoutARedisCall() throws Exception {
        RedisLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long firstFence = lock.getFence();
        lock.unlock();
        List<String> lingering = queue();
        assertThat(lingering).as("the lingering entry").hasSize(1);
        lock.lock();
        long secondFence = lock.getFence();
        lock.unlock();
        // A release and a new write would have queued another entry id and drawn a new fence.
        assertThat(queue()).as("the queue after a re-acquisition").isEqualTo(lingering);
        assertThat(secondFence).isEqualTo(firstFence + 1);
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(1);
    }

    @Test
    void anotherProcessQueueingBehindALingeringEntryEndsTheLingerAtOnce() throws Exception {
        RedisLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        RedisLockRegistry peer = newRegistry("peer", LocalHandoff.DEFAULT);
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long lingeringFence = lock.getFence();
        lock.unlock();
        assertThat(queueSize()).as("the lingering entry").isEqualTo(1);
        // The documented cost of lingering: a try-once elsewhere finds the key taken.
        assertThat(this.threads.submit(() -> tryOnce(peer.obtain(this.key))).get(LONG.toMillis(), MILLISECONDS))
            .isFalse();
        long peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG))
            .get(LONG.toMillis() * 2, MILLISECONDS);
        assertThat(Fences.storeFence(peerFence)).isGreaterThan(Fences.storeFence(lingeringFence));
        assertThat(Fences.pass(peerFence)).isZero();
        await().atMost(LONG).until(() -> queueSize() == 0);
    }

    /**
     * The peer queues while another process holds, so its message names that holder; the entry
     * that takes the key next learns from the handover that the peer waits behind it, and does
     * not linger in its way.
     */
    @Test
    void anEntryHandedTheKeyWithAnotherQueuedBehindItDoesNotLinger() throws Exception {
        RedisLockRegistry first = newRegistry("first", LocalHandoff.DISABLED);
        RedisLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        RedisLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> mine = new CompletableFuture<>();
        this.threads.submit(() -> mine.complete(holdAndGetFence(registry.obtain(this.key), LONG)));
        await().atMost(LONG).until(() -> queueSize() == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> queueSize() == 3);
        firstLock.unlock();
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> queueSize() == 0);
    }

    /** Messages published while a subscription was down are lost: its holders assume someone queued. */
    @Test
    void aLingeringEntryGoesBackWhenItsSubscriptionReconnects() throws Exception {
        RedisLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        lock.unlock();
        assertThat(queueSize()).as("the lingering entry").isEqualTo(1);
        raw.sync().clientKill(KillArgs.Builder.typePubsub());
        await().atMost(LONG).until(() -> queueSize() == 0);
        assertThat(registry.getStatistics().getHoldsLost()).isZero();
    }

    private long queueSize() {
        return raw.sync().zcard(new RedisKeyspace(this.namespace).queue(this.key));
    }

    /** @return the ids in the key's queue, oldest first */
    private List<String> queue() {
        return raw.sync().zrange(new RedisKeyspace(this.namespace).queue(this.key), 0, -1);
    }

    private static boolean tryOnce(FencedLock lock) {
        if (!lock.tryLock()) {
            return false;
        }
        lock.unlock();
        return true;
    }

    private static long holdAndGetFence(FencedLock lock, Duration wait) throws InterruptedException {
        if (!lock.tryLock(wait.toMillis(), MILLISECONDS)) {
            throw new AssertionError("not acquired within " + wait);
        }
        try {
            return lock.getFence();
        }
        finally {
            lock.unlock();
        }
    }
}
