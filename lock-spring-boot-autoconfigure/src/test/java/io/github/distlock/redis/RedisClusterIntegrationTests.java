package io.github.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockSnapshot;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.RedisServer;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.StringCodec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Redis store on a real 3-node Redis Cluster: a lock's names share one slot, so its scripts
 * run on the node that owns it; handovers published on one node reach waiters subscribed on
 * another; the endpoint's listing scans every node.
 */
class RedisClusterIntegrationTests {

    private static final Duration TTL = Duration.ofSeconds(20);

    /** Far below the waiters' recheck interval (5 s): a handover that needed a recheck would fail it. */
    private static final Duration PROMPT = Duration.ofSeconds(2);

    private static final Duration LONG = Duration.ofSeconds(30);

    private static final List<RedisServer> nodes = new ArrayList<>();

    private static RedisClusterClient holderClient;

    private static RedisClusterClient waiterClient;

    @BeforeAll
    static void startCluster() {
        for (int i = 0; i < 3; i++) {
            nodes.add(RedisServer.startClusterNode());
        }
        RedisServer.createCluster(nodes);
        List<RedisURI> seeds = nodes.stream().map(node -> RedisURI.create(node.uri())).toList();
        holderClient = RedisClusterClient.create(seeds);
        waiterClient = RedisClusterClient.create(seeds);
    }

    @AfterAll
    static void stopCluster() {
        holderClient.shutdown();
        waiterClient.shutdown();
        nodes.forEach(RedisServer::close);
    }

    @Test
    void locksOnEveryNodeHandOverAcrossNodesAndAreListedFromAllOfThem() throws Exception {
        try (RedisLockRegistry holder = registry(holderClient, "holder");
                RedisLockRegistry waiter = registry(waiterClient, "waiter")) {
            List<String> keys = new ArrayList<>();
            Set<Integer> slots = new HashSet<>();
            for (int i = 0; keys.size() < 12; i++) {
                String key = "order-" + i;
                keys.add(key);
                slots.add(SlotHash.getSlot(holder.keyspace().queue(key)));
            }
            // Keys on every node: slots 0-5460, 5461-10922 and 10923-16383 belong to one node each.
            assertThat(slots).anyMatch(slot -> slot <= 5460).anyMatch(slot -> slot > 5460 && slot <= 10922)
                .anyMatch(slot -> slot > 10922);
            List<FencedLock> held = new ArrayList<>();
            for (String key : keys) {
                FencedLock lock = holder.obtain(key, true);
                lock.lock();
                held.add(lock);
            }
            List<CompletableFuture<Long>> waiting = new ArrayList<>();
            for (String key : keys) {
                waiting.add(BackgroundAcquirer.acquireAndRelease(waiter.obtain(key, true), LONG));
            }
            await().atMost(LONG).until(() -> waiter.getWaitingThreadCount() == keys.size());

            List<LockSnapshot> listed = holder.describeLocks(1000).locks();
            assertThat(listed).extracting(LockSnapshot::key).containsExactlyInAnyOrderElementsOf(keys);
            assertThat(listed).allSatisfy(lock -> assertThat(lock.waiters()).singleElement()
                .satisfies(entry -> assertThat(entry.owner()).isEqualTo("waiter")));

            for (int i = 0; i < keys.size(); i++) {
                long fence = held.get(i).getFence();
                long releasedAt = System.nanoTime();
                held.get(i).unlock();
                assertThat(waiting.get(i).get(LONG.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(fence);
                assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).as("handover of %s", keys.get(i))
                    .isLessThan(PROMPT);
            }
            await().atMost(LONG).until(() -> holder.describeLocks(1000).locks().isEmpty());
        }
    }

    /** The version check and the connection probe reach every primary, not only the node a client asks first. */
    @Test
    void theVersionCheckAndTheProbeReachEveryPrimary() throws Exception {
        try (var commands = holderClient.connect(StringCodec.UTF8);
                var pubSub = holderClient.connectPubSub(StringCodec.UTF8)) {
            List<Long> infoBefore = nodes.stream().map(node -> node.commandCalls("info")).toList();
            RedisVersion version = RedisConnection.checkVersion(commands.async(), LONG);
            assertThat(version).isNotNull();
            assertThat(version.isAtLeast(RedisVersion.MINIMUM)).as("%s is at least 5.0", version).isTrue();
            List<Long> pingBefore = nodes.stream().map(node -> node.commandCalls("ping")).toList();
            new RedisConnection.Connected(commands, commands.async(), pubSub).ping().get(LONG.toSeconds(),
                    TimeUnit.SECONDS);
            for (int i = 0; i < nodes.size(); i++) {
                // Each read of the counts is an INFO of its own.
                assertThat(nodes.get(i).commandCalls("info")).as("INFO calls on node %d", i)
                    .isGreaterThanOrEqualTo(infoBefore.get(i) + 3);
                assertThat(nodes.get(i).commandCalls("ping")).as("PING calls on node %d", i)
                    .isGreaterThan(pingBefore.get(i));
            }
        }
    }

    private static RedisLockRegistry registry(RedisClusterClient client, String owner) {
        return RedisLockRegistry.builder(client).namespace("cluster:").leaseTtl(TTL).ownerIdentity(owner)
            .description("Redis Cluster").build();
    }
}
