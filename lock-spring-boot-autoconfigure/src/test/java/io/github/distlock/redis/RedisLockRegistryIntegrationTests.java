package io.github.distlock.redis;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.core.Fences;
import io.github.distlock.core.LockCounters;
import io.github.distlock.store.Wait;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.LostHolds;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.TcpProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** What is particular to the Redis layout: namespaces, dead entries, the fence counter, inspection. */
class RedisLockRegistryIntegrationTests {

    /** Far above the prompt bounds below: anything that waited for an expiry would fail them. */
    private static final Duration TTL = Duration.ofSeconds(20);

    private static final Duration PROMPT = Duration.ofSeconds(2);

    private static final Duration LONG = Duration.ofSeconds(30);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisClient client;

    private static StatefulRedisConnection<String, String> raw;

    private RedisLockRegistry outer;

    private RedisLockRegistry inner;

    @BeforeAll
    static void startRedis() {
        client = RedisClient.create(redis.uri());
        raw = client.connect();
    }

    @AfterAll
    static void stopRedis() {
        raw.close();
        client.shutdown();
    }

    @AfterEach
    void closeRegistries() {
        if (this.outer != null) {
            this.outer.close();
        }
        if (this.inner != null) {
            this.inner.close();
        }
    }

    private static RedisLockRegistry registry(String namespace, String owner) {
        return RedisLockRegistry.builder(client).namespace(namespace).leaseTtl(TTL).ownerIdentity(owner).build();
    }

    /**
     * A lost session tells its entries one after another, after its warning: a hold read in
     * between must already read as lost (the state is set up here by ending the session alone).
     */
    @Test
    void aHoldReadsAsLostOnceItsSessionIsEvenBeforeTheLossReachesItsEntry() throws Exception {
        this.outer = registry("session-loss:", "own");
        FencedLock lock = this.outer.obtain("held", true);
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        RedisSession session = this.outer.redis().session();
        assertThat(session).isNotNull();
        assertThat(session.lose("ended by the test")).isTrue();
        LostHolds.assertReadsAsLostAndIsCountedOnce(lock, this.outer);
    }

    /**
     * Messages lost (the subscription came back) while a waiter's check was in flight: the check's
     * answer predates the loss and must not put off the check the loss asked for. Here the holder's
     * entry dies without a message right behind the check; the waiter used to learn of it only at
     * its next scheduled check (5 s on), and takes the lock at once now.
     */
    @Test
    void messagesLostDuringACheckAreFollowedByAnotherCheckAtOnce() throws Exception {
        this.outer = registry("lost-during-check:", "holder");
        this.inner = registry("lost-during-check:", "waiter");
        FencedLock held = this.outer.obtain("job", true);
        held.lock();
        RedisKeyspace.LockNames names = this.outer.redis().keyspace().namesOf("job");
        String holderId = raw.sync().zrange(names.queue(), 0, 0).get(0);
        FencedLock waiter = this.inner.obtain("job", true);
        CompletableFuture<Long> acquiredAt = new CompletableFuture<>();
        Thread waiting = new Thread(() -> {
            try {
                if (waiter.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    acquiredAt.complete(System.nanoTime());
                    waiter.unlock();
                }
                else {
                    acquiredAt.completeExceptionally(new AssertionError("the waiter timed out"));
                }
            }
            catch (Throwable ex) {
                acquiredAt.completeExceptionally(ex);
            }
        }, "waiter");
        waiting.start();
        await().atMost(LONG).until(() -> raw.sync().zcard(names.queue()) == 2 && inWait(waiting));
        // Known to Redis already: a check sent as EVALSHA is not sent again (as EVAL) behind the delete below.
        raw.sync().scriptLoad(RedisScripts.CHECK.source());
        java.lang.reflect.Method subscribed = RedisLockStore.class.getDeclaredMethod("subscribed");
        subscribed.setAccessible(true);
        long resumedAt;
        redis.server().pause();
        try {
            subscribed.invoke(this.inner.redis());
            await().atMost(LONG).until(() -> inCheck(waiting));
            // Queued behind the check on the waiter's connection: Redis runs it after the check.
            RedisConnection.Connected connection = this.inner.redis().connected(Wait.timeout(LONG.toNanos(), false));
            CompletableFuture<Long> deleted = connection.async().del(names.entryPrefix() + holderId).toCompletableFuture();
            subscribed.invoke(this.inner.redis());
            redis.server().resume();
            resumedAt = System.nanoTime();
            assertThat(deleted.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
        }
        finally {
            redis.server().resume();
        }
        long waited = acquiredAt.get(LONG.toSeconds(), TimeUnit.SECONDS) - resumedAt;
        assertThat(Duration.ofNanos(waited)).isLessThan(PROMPT);
        waiting.join(LONG.toMillis());
    }

    /** @return whether {@code thread} waits for the answer of its entry's check, sent already */
    private static boolean inCheck(Thread thread) {
        StackTraceElement[] frames = thread.getStackTrace();
        return java.util.Arrays.stream(frames).anyMatch(frame -> frame.getClassName().equals(RedisEntry.class.getName())
                && frame.getMethodName().equals("check"))
                && java.util.Arrays.stream(frames).anyMatch(frame -> frame.getClassName().equals(
                        io.github.distlock.store.StoreCalls.class.getName()) && frame.getMethodName().equals("await"));
    }

    private static boolean inWait(Thread thread) {
        return java.util.Arrays.stream(thread.getStackTrace())
            .anyMatch(frame -> frame.getClassName().equals(RedisEntry.class.getName())
                    && frame.getMethodName().equals("awaitChange"));
    }

    /** Every new pair of connections asks the server's version first; this server's passes the check. */
    @Test
    void connectingChecksTheServersVersion() throws Exception {
        long before = redis.server().commandCalls("info");
        this.outer = registry("version:", "checked");
        this.outer.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
        // The read above counts once: the registry asked once more.
        assertThat(redis.server().commandCalls("info")).as("INFO calls").isEqualTo(before + 2);
        RedisVersion version = RedisConnection.checkVersion(raw.async(), LONG);
        assertThat(version).isNotNull();
        assertThat(version.isAtLeast(RedisVersion.MINIMUM)).as("%s is at least 5.0", version).isTrue();
        assertThat(raw.sync().info("server")).contains("redis_version:" + version.text() + "\r\n");
    }

    @Test
    void connectAfterCloseFailsInsteadOfThrowing() {
        RedisLockRegistry closed = registry("closed:", "closed");
        closed.close();
        // A health probe calls connect() at any time: the failure comes in the future, as any other.
        assertThat(closed.connect()).failsWithin(LONG).withThrowableThat().withMessageContaining("closed");
    }

    @Test
    void nestedNamespacesNeverSeeOrQueueBehindEachOthersLocks() throws Exception {
        this.outer = registry("nest:", "outer");
        this.inner = registry("nest:orders:", "inner");
        FencedLock outerLock = this.outer.obtain("orders:1", true);
        outerLock.lock();
        FencedLock innerLock = this.inner.obtain("1", true);
        FencedLock innerSameKey = this.inner.obtain("orders:1", true);
        try {
            assertThat(innerLock.tryLock(0, TimeUnit.SECONDS)).isTrue();
            assertThat(innerSameKey.tryLock(0, TimeUnit.SECONDS)).isTrue();
            NamespaceSnapshot outerLocks = this.outer.describeLocks(100);
            NamespaceSnapshot innerLocks = this.inner.describeLocks(100);
            assertThat(outerLocks.locks()).extracting(LockSnapshot::key).containsExactly("orders:1");
            assertThat(innerLocks.locks()).extracting(LockSnapshot::key).containsExactly("1", "orders:1");
            assertThat(outerLocks.namespace()).isEqualTo("nest:");
        }
        finally {
            innerSameKey.unlock();
            innerLock.unlock();
            outerLock.unlock();
        }
    }

    @Test
    void aDeadWaiterInTheQueueDoesNotDelayTheNextOne() throws Exception {
        this.outer = registry("dead-waiter:", "holder");
        FencedLock holder = this.outer.obtain("job", true);
        holder.lock();
        RedisKeyspace names = this.outer.keyspace();
        // An entry whose process died: queued behind the holder, its liveness key gone.
        long deadFence = raw.sync().incr(names.fenceCounter("job"));
        raw.sync().zadd(names.queue("job"), deadFence, "dead-process-1");
        this.inner = registry("dead-waiter:", "next");
        CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(this.inner.obtain("job", true), LONG);
        await().atMost(LONG).until(() -> raw.sync().zcard(names.queue("job")) == 3);

        long releasedAt = System.nanoTime();
        holder.unlock();
        assertThat(Fences.storeFence(next.get(LONG.toSeconds(), TimeUnit.SECONDS))).isGreaterThan(deadFence);
        assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(PROMPT);
        await().atMost(LONG).until(() -> raw.sync().exists(names.queue("job")) == 0);
    }

    @Test
    void fencesKeepIncreasingWhenTheCounterIsGone() throws Exception {
        this.outer = registry("counter:", "owner");
        FencedLock lock = this.outer.obtain("k", true);
        lock.lock();
        long first = lock.getFence();
        lock.unlock();
        // As after its expiry, or a restart without persistence.
        raw.sync().del(this.outer.keyspace().fenceCounter("k"));
        lock.lock();
        long second = lock.getFence();
        lock.unlock();
        assertThat(second).isGreaterThan(first);
        // Started from the server's clock in microseconds.
        long serverMicros = Long.parseLong(raw.sync().time().get(0)) * 1_000_000;
        assertThat(second).isGreaterThan(serverMicros - TimeUnit.MINUTES.toMicros(1));
    }

    @Test
    void fencesKeepIncreasingWhenTheCounterLagsAsOnAPromotedReplica() throws Exception {
        this.outer = registry("lagging:", "owner");
        FencedLock lock = this.outer.obtain("k", true);
        lock.lock();
        long beforeFailover = lock.getFence();
        lock.unlock();
        // A replica promoted before it saw the last increments has an older counter.
        raw.sync().set(this.outer.keyspace().fenceCounter("k"), "5");
        lock.lock();
        long afterFailover = lock.getFence();
        lock.unlock();
        assertThat(afterFailover).isGreaterThan(beforeFailover);
    }

    @Test
    void aHoldIsLostOnceItsDeadlinePassedEvenIfTheMaintenanceThreadHasNotRunYet() throws Exception {
        // As after a pause of the whole process: nothing has renewed or checked anything yet.
        this.outer = RedisLockRegistry.builder(client).namespace("overdue:").leaseTtl(Duration.ofSeconds(1))
            .ownerIdentity("paused").build();
        FencedLock lock = this.outer.obtain("k", true);
        lock.lock();
        CountDownLatch stuck = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        this.outer.runOnMaintenanceThread(() -> {
            stuck.countDown();
            try {
                release.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(stuck.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            long lockedAt = System.nanoTime();
            await().atMost(LONG).until(() -> System.nanoTime() - lockedAt > TimeUnit.MILLISECONDS.toNanos(1_100));
            assertThat(lock.isLockedByCurrentThread()).isFalse();
            assertThat(this.outer.getStatistics().getHoldsLost()).isEqualTo(1);
            assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
                .withMessageContaining("no renewal");
        }
        finally {
            release.countDown();
        }
    }

    @Test
    void aNewEntryQueuesBehindEveryQueuedOneEvenIfTheServersClockWentBack() throws Exception {
        this.outer = registry("clock-back:", "holder");
        FencedLock holder = this.outer.obtain("k", true);
        holder.lock();
        RedisKeyspace names = this.outer.keyspace();
        // As if the holder's fence came from a clock that has since stepped back an hour, and the
        // counter expired (a registry with a shorter TTL on the namespace).
        String holderId = raw.sync().zrange(names.queue("k"), 0, 0).get(0);
        long future = Fences.storeFence(holder.getFence()) + TimeUnit.HOURS.toMicros(1);
        raw.sync().zadd(names.queue("k"), future, holderId);
        raw.sync().del(names.fenceCounter("k"));
        this.inner = registry("clock-back:", "newcomer");
        FencedLock newcomer = this.inner.obtain("k", true);
        try {
            assertThat(newcomer.tryLock(0, TimeUnit.SECONDS)).as("the newcomer must not pass the holder").isFalse();
        }
        finally {
            holder.unlock();
        }
        assertThat(newcomer.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(Fences.storeFence(newcomer.getFence())).isGreaterThan(future);
        newcomer.unlock();
    }

    @Test
    void aRemovalResentAfterAReconnectStillCountsAsARelease() throws Exception {
        this.outer = registry("resent:", "owner");
        RedisLockStore store = bareStore(client, "resent-store:");
        try {
            RedisEntry entry = held(store);
            assertThat(entry.release()).isTrue();
            // What Lettuce sends again when the connection dropped before the answer arrived.
            Long again = raw.sync().evalsha(RedisScripts.REMOVE.sha(), io.lettuce.core.ScriptOutputType.INTEGER,
                    new String[] { entry.names().queue(), entry.entryKey() }, entry.id, entry.names().entryPrefix(),
                    store.keyspace().channel(), store.removalMarkerArgument());
            assertThat(again).isEqualTo(1L);
        }
        finally {
            store.close();
        }
    }

    /**
     * A resend may come as long as the release waits for its answer (a request timeout), which can
     * be longer than the TTL: the removal still counts as a release then.
     */
    @Test
    void aRemovalResentLaterThanTheTtlStillCountsAsARelease() throws Exception {
        this.outer = registry("resent-late:", "owner");
        RedisLockStore store = bareStore(client, "resent-late-store:", Duration.ofSeconds(1));
        try {
            RedisEntry entry = held(store);
            assertThat(entry.release()).isTrue();
            Thread.sleep(1_500);
            Long again = raw.sync().evalsha(RedisScripts.REMOVE.sha(), io.lettuce.core.ScriptOutputType.INTEGER,
                    new String[] { entry.names().queue(), entry.entryKey() }, entry.id, entry.names().entryPrefix(),
                    store.keyspace().channel(), store.removalMarkerArgument());
            assertThat(again).isEqualTo(1L);
        }
        finally {
            store.close();
        }
    }

    /**
     * Lettuce sends unanswered commands again after a reconnect, in order: a write whose caller
     * gave up and removed the entry, resent with that removal, must not bring the entry back.
     */
    @Test
    void aWriteResentAfterItsEntryWasRemovedDoesNotBringItBack() throws Exception {
        this.outer = registry("resent-write:", "owner");
        RedisLockStore store = bareStore(client, "resent-write-store:");
        try {
            RedisEntry entry = held(store);
            assertThat(entry.release()).isTrue();
            List<Object> again = raw.sync().evalsha(RedisScripts.ENQUEUE.sha(), io.lettuce.core.ScriptOutputType.MULTI,
                    new String[] { entry.names().queue(), entry.names().counter(), entry.entryKey() }, entry.id,
                    store.ttlArgument(), "resent value", entry.names().entryPrefix(), store.keyspace().channel());
            assertThat(again).as("the resent write's answer").containsExactly(-1L);
            assertThat(raw.sync().zscore(entry.names().queue(), entry.id)).as("the entry in the queue").isNull();
            assertThat(raw.sync().exists(entry.entryKey())).as("the entry's liveness key").isZero();
            Long removedAgain = raw.sync().evalsha(RedisScripts.REMOVE.sha(), io.lettuce.core.ScriptOutputType.INTEGER,
                    new String[] { entry.names().queue(), entry.entryKey() }, entry.id, entry.names().entryPrefix(),
                    store.keyspace().channel(), store.removalMarkerArgument());
            assertThat(removedAgain).as("the resent removal, still a release").isEqualTo(1L);
        }
        finally {
            store.close();
        }
    }

    /**
     * An acquisition that gives up waits briefly for its entry's removal to be confirmed, but not
     * while the connection is down and Lettuce holds commands until it reconnects: nothing would
     * answer within that wait, which only made the caller return late (G10).
     */
    @Test
    void anEntryGivenUpWhileTheConnectionIsDownIsNotWaitedFor() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(redis.uri().replace("redis://", "http://"))) {
            RedisClient proxied = RedisClient.create("redis://127.0.0.1:" + URI.create(proxy.endpoint()).getPort());
            RedisLockStore store = bareStore(proxied, "given-up-down:");
            try {
                RedisEntry entry = held(store);
                proxy.reset();
                await().atMost(LONG)
                    .until(() -> !store.connected(Wait.timeout(LONG.toNanos(), false)).commands().isOpen());
                long start = System.nanoTime();
                store.removeBeforeReturning(entry, Wait.timeout(LONG.toNanos(), false));
                // It waited 500 ms before; without a wait it takes microseconds.
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(400));
            }
            finally {
                store.close();
                proxied.shutdown();
            }
        }
    }

    /** A store without a registry around it, for tests that drive entries and scripts by hand. */
    private static RedisLockStore bareStore(RedisClient client, String namespace) {
        return bareStore(client, namespace, TTL);
    }

    private static RedisLockStore bareStore(RedisClient client, String namespace, Duration ttl) {
        return new RedisLockStore(client, new RedisKeyspace(namespace), ttl, Duration.ofSeconds(5), "owner", "Redis",
                new io.github.distlock.core.LockCounters(), (entry, reason) -> {
                });
    }

    /** An entry of key {@code k} that holds it. */
    private static RedisEntry held(RedisLockStore store) throws Exception {
        RedisEntry entry = (RedisEntry) store.newEntry("k", Wait.timeout(LONG.toNanos(), true));
        assertThat(entry.acquire(Wait.timeout(LONG.toNanos(), true), Wait.timeout(LONG.toNanos(), true))).isTrue();
        return entry;
    }

    @Test
    void describeLockShowsTheHolderAndWaitersWithTheirLeases() throws Exception {
        this.outer = registry("inspect:", "holder-app");
        this.inner = registry("inspect:", "waiter-app");
        FencedLock holder = this.outer.obtain("report", true);
        holder.lock();
        CompletableFuture<Long> waiter = BackgroundAcquirer.acquireAndRelease(this.inner.obtain("report", true),
                LONG);
        await().atMost(LONG).until(() -> this.inner.getWaitingThreadCount() == 1);
        try {
            LockSnapshot lock = this.inner.describeLock("report", 10);
            assertThat(lock.holder().describe()).isEqualTo("holder-app/" + Thread.currentThread().getName());
            assertThat(lock.holder().fence()).isEqualTo(holder.getFence());
            assertThat(lock.holder().leaseTimeToLive()).isPositive().isLessThanOrEqualTo(TTL);
            assertThat(lock.holder().queuedAt()).isNotNull();
            assertThat(lock.waiters()).singleElement().satisfies(entry -> {
                assertThat(entry.owner()).isEqualTo("waiter-app");
                assertThat(entry.thread()).isEqualTo(BackgroundAcquirer.THREAD_NAME);
                assertThat(entry.fence()).isGreaterThan(holder.getFence());
            });
            assertThat(this.inner.describeLock("report", 1).waiters()).isEmpty();
            assertThat(holder.getHolder()).isEqualTo("holder-app/" + Thread.currentThread().getName());
        }
        finally {
            holder.unlock();
        }
        waiter.get(LONG.toSeconds(), TimeUnit.SECONDS);
    }
}
