package io.github.distlock.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockLostException;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.TcpProxy;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * Connections that die without a reset, as when a NAT or firewall forgets them or the host is
 * gone: a proxy between one registry and Redis drops every byte of the open connections and
 * keeps them open, so that neither end learns it. The registry replaces them within a third of
 * the TTL, its holds survive, the messages it missed are made up for, and later ones reach it.
 * Also a subscription that Redis closes alone, with the command connection up: what it missed is
 * made up for once it is back.
 */
class RedisSilentConnectionIntegrationTests {

    /** Probes every 1.5 s, answered within 1.5 s: a silent pair is replaced within 3 s. */
    private static final Duration TTL = Duration.ofSeconds(9);

    private static final Duration BOUND = TTL.dividedBy(3);

    /** What a loaded machine may add to the bound: connecting again and a round trip or two. */
    private static final Duration SLACK = Duration.ofMillis(1500);

    /** Far below the linger and the waiters' recheck interval (3 s): a message, not a poll or a timer. */
    private static final Duration PROMPT = Duration.ofSeconds(2);

    private static final Duration LONG = Duration.ofSeconds(30);

    /** A linger that only a message (or a loss) can end within a test. */
    private static final LocalHandoff LINGER = new LocalHandoff(Duration.ofMillis(10), Duration.ofMinutes(10));

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private TcpProxy proxy;

    private RedisClient proxiedClient;

    private RedisClient directClient;

    private StatefulRedisConnection<String, String> raw;

    /** On the proxy: its connections fall silent. */
    private RedisLockRegistry cutOff;

    /** On a direct connection, as another process. */
    private RedisLockRegistry other;

    @BeforeEach
    void start() {
        String namespace = "silent-" + UUID.randomUUID() + ":";
        this.proxy = TcpProxy.start(redis.uri().replace("redis://", "http://"));
        this.proxiedClient = RedisClient.create("redis://127.0.0.1:" + this.proxy.port());
        this.directClient = RedisClient.create(redis.uri());
        this.raw = this.directClient.connect();
        this.cutOff = RedisLockRegistry.builder(this.proxiedClient).namespace(namespace).leaseTtl(TTL)
            .ownerIdentity("cut-off").localHandoff(LINGER).build();
        this.other = RedisLockRegistry.builder(this.directClient).namespace(namespace).leaseTtl(TTL)
            .ownerIdentity("other").build();
    }

    @AfterEach
    void stop() {
        this.cutOff.close();
        this.other.close();
        this.raw.close();
        this.proxiedClient.shutdown();
        this.directClient.shutdown();
        this.proxy.close();
    }

    @Test
    void holdsSurviveWhenTheConnectionsFallSilent() throws Exception {
        FencedLock held = this.cutOff.obtain("held", true);
        held.lock();
        assertThat(this.proxy.forwardedConnections()).as("connections before").isEqualTo(2);
        long severedAt = System.nanoTime();
        this.proxy.severOpenConnections();

        await().atMost(LONG).until(() -> this.proxy.forwardedConnections() >= 4
                || this.cutOff.getStatistics().getHoldsLost() > 0);
        Duration replacedAfter = since(severedAt);
        assertThat(this.cutOff.getStatistics().getHoldsLost()).as("holds lost").isZero();
        assertThat(replacedAfter).as("the silent connections replaced after").isLessThan(BOUND.plus(SLACK));

        // Past the deadline that the last renewal on the silent pair set: the new pair's renewals kept the hold.
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(severedAt + TTL.plusSeconds(1).toNanos()
                - System.nanoTime())));
        assertThat(held.isLockedByCurrentThread()).as("held after one TTL").isTrue();
        assertThat(this.other.obtain("held", true).tryLock()).as("another registry's try-once").isFalse();
        held.unlock();
        assertThat(this.cutOff.getStatistics().getHoldsLost()).as("holds lost").isZero();
    }

    /**
     * While the connections are silent, the waiter's handover and the message that another
     * registry queued behind the lingering entry are lost; both are made up for once the new
     * subscription is confirmed, not after the entries' TTL.
     */
    @Test
    void messagesMissedWhileTheConnectionsWereSilentAreMadeUpFor() throws Exception {
        lockUntilLingering("lingering");
        FencedLock otherHolds = this.other.obtain("waited", true);
        otherHolds.lock();
        CompletableFuture<Long> waiter = BackgroundAcquirer.acquireAndRelease(this.cutOff.obtain("waited", true), LONG);
        await().atMost(LONG).until(() -> this.cutOff.getWaitingThreadCount() == 1);

        long severedAt = System.nanoTime();
        this.proxy.severOpenConnections();
        otherHolds.unlock();
        CompletableFuture<Long> behindLingering = BackgroundAcquirer
            .acquireAndRelease(this.other.obtain("lingering", true), LONG);

        waiter.get(LONG.toSeconds(), TimeUnit.SECONDS);
        assertThat(since(severedAt)).as("the waiter held after").isLessThan(BOUND.plus(SLACK));
        behindLingering.get(LONG.toSeconds(), TimeUnit.SECONDS);
        assertThat(since(severedAt)).as("the lingering entry given back after").isLessThan(BOUND.plus(SLACK));
        assertThat(this.cutOff.getStatistics().getHoldsLost()).as("holds lost").isZero();
    }

    /**
     * Once the new pair is subscribed, a lingering entry hears at once that another registry
     * queued behind it: only the message can end a linger of ten minutes.
     */
    @Test
    void messagesReachTheRegistryAgainOnceItsConnectionsWereReplaced() throws Exception {
        lockUntilLingering("before");
        long severedAt = System.nanoTime();
        this.proxy.severOpenConnections();
        // Given back (not expired) once the new subscription was confirmed: later entries miss no message.
        await().atMost(LONG).until(() -> this.raw.sync().zcard(this.cutOff.keyspace().queue("before")) == 0);
        assertThat(since(severedAt)).as("the lingering entry given back after").isLessThan(BOUND.plus(SLACK));

        lockUntilLingering("after");
        long queuedAt = System.nanoTime();
        FencedLock next = this.other.obtain("after", true);
        assertThat(next.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as("the other registry's acquisition").isTrue();
        assertThat(since(queuedAt)).as("the linger ended after").isLessThan(PROMPT);
        next.unlock();
    }

    /**
     * A connection that falls silent while it opens (before Redis answered its handshake) keeps
     * callers from connecting again only for the attempt's bound, twice the request timeout,
     * whatever Lettuce's own timeouts say.
     */
    @Test
    void aConnectionThatFallsSilentWhileItOpensIsGivenUpAfterTheAttemptsBound() throws Exception {
        Duration requestTimeout = Duration.ofSeconds(1);
        try (RedisLockRegistry quick = RedisLockRegistry.builder(this.proxiedClient).namespace("quick:")
            .requestTimeout(requestTimeout).ownerIdentity("quick").build()) {
            this.proxy.stall();
            long startedAt = System.nanoTime();
            CompletableFuture<Void> first = quick.connect();
            await().atMost(LONG).until(() -> this.proxy.forwardedConnections() == 1);
            this.proxy.severOpenConnections();
            this.proxy.restore();
            assertThat(first).failsWithin(LONG);
            // Later calls join the silent attempt until it counts as failed, then connect again.
            await().atMost(LONG).until(() -> quick.connect().handle((connected, failure) -> failure == null)
                .get(LONG.toSeconds(), TimeUnit.SECONDS));
            assertThat(since(startedAt)).as("connected again after")
                .isLessThan(requestTimeout.multipliedBy(2).plus(SLACK).plus(SLACK));
        }
    }

    /**
     * Only the subscription drops (Redis killed the pub/sub connection, as it does a subscriber
     * past its output buffer limit) and cannot reconnect for a while; the command connection
     * stays up. Meanwhile the holder's liveness key is deleted and another registry drops the
     * dead head and takes the key: the {@code -<id>} it publishes is lost. Once the subscription
     * is back, the holder knows its hold lost at once, not at the next renewal (a TTL of 30 s:
     * 10 s later).
     */
    @Test
    void aHeadDroppedWhileOnlyTheSubscriptionWasDownIsKnownLostOnceItIsBack() throws Exception {
        Duration ttl = Duration.ofSeconds(30);
        String namespace = "resubscribed-" + UUID.randomUUID() + ":";
        try (RedisLockRegistry holder = RedisLockRegistry.builder(this.proxiedClient).namespace(namespace).leaseTtl(ttl)
            .ownerIdentity("holder").build();
                RedisLockRegistry taker = RedisLockRegistry.builder(this.directClient).namespace(namespace)
                    .leaseTtl(ttl).ownerIdentity("taker").build()) {
            long builtAt = System.nanoTime();
            FencedLock held = holder.obtain("dropped", true);
            held.lock();
            taker.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
            String channel = holder.keyspace().channel();
            assertThat(this.raw.sync().pubsubNumsub(channel).get(channel)).as("subscribers").isEqualTo(2);

            this.proxy.refuseNewConnections();
            try {
                this.raw.sync().clientKill(io.lettuce.core.KillArgs.Builder.typePubsub());
                await().atMost(LONG).pollInterval(Duration.ofMillis(10))
                    .until(() -> this.raw.sync().pubsubNumsub(channel).get(channel) == 1);
                RedisKeyspace names = holder.keyspace();
                String holderId = this.raw.sync().zrange(names.queue("dropped"), 0, 0).get(0);
                assertThat(this.raw.sync().del(names.entryPrefix("dropped") + holderId)).as("liveness key deleted")
                    .isEqualTo(1);
                FencedLock taken = taker.obtain("dropped", true);
                assertThat(taken.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as("taken by the other registry").isTrue();
                taken.unlock();
                assertThat(held.isLockedByCurrentThread()).as("the hold known lost while unsubscribed").isTrue();
            }
            finally {
                System.out.println("[redis resubscribed] restored at " + since(builtAt).toMillis() + " ms");
                this.proxy.restore();
            }
            await().atMost(LONG).pollInterval(Duration.ofMillis(10))
                .until(() -> this.raw.sync().pubsubNumsub(channel).get(channel) == 2);
            long resubscribedAt = System.nanoTime();
            System.out.println("[redis resubscribed] resubscribed at " + since(builtAt).toMillis() + " ms");
            await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(10))
                .until(() -> !held.isLockedByCurrentThread());
            Duration lostAfter = since(resubscribedAt);
            LockLostException lost = catchThrowableOfType(LockLostException.class, held::unlock);
            System.out.printf("[redis resubscribed] hold known lost %d ms after the subscription was back (TTL %s): %s%n",
                    lostAfter.toMillis(), ttl, (lost != null) ? lost.getMessage() : "no LockLostException");
            assertThat(lostAfter).as("known lost after the subscription was back").isLessThan(PROMPT);
            assertThat(lost).as("the unlock's exception").isNotNull();
        }
    }

    /**
     * An unlock whose release waits in Lettuce's buffer (the connections dropped and cannot
     * reconnect, as while Redis is down or failing over) when the pair, which answers no probe, is
     * replaced: Lettuce cancels the buffered commands of the connection it closes, and the release
     * counts as unconfirmed (the unlock returns and the removal goes on in the background), not as a
     * {@code CancellationException} thrown from {@code unlock()}. The request timeout (5 s) outlasts
     * the replacement (within 3 s), so only the cancellation can end the release's wait.
     */
    @Test
    void aReleaseCancelledByTheReplacementOfItsConnectionsIsUnconfirmedNotThrown() throws Exception {
        String namespace = "cancelled-" + UUID.randomUUID() + ":";
        // A proxy of its own, closed below: reconnecting is refused, so Lettuce buffers commands meanwhile.
        TcpProxy gone = TcpProxy.start(redis.uri().replace("redis://", "http://"));
        RedisClient goneClient = RedisClient.create("redis://127.0.0.1:" + gone.port());
        AtomicInteger disconnected = new AtomicInteger();
        goneClient.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
                disconnected.incrementAndGet();
            }
        });
        try (RedisLockRegistry releasing = RedisLockRegistry.builder(goneClient).namespace(namespace).leaseTtl(TTL)
            .ownerIdentity("releasing").build();
                RedisLockRegistry next = RedisLockRegistry.builder(this.directClient).namespace(namespace)
                    .leaseTtl(TTL).ownerIdentity("next").build()) {
            FencedLock held = releasing.obtain("held", true);
            held.lock();
            gone.close();
            await().atMost(LONG).until(() -> disconnected.get() >= 2);

            Throwable thrown = catchThrowable(held::unlock);
            assertThat(thrown).as("what unlock threw").isNull();
            assertThat(held.isLockedByCurrentThread()).as("held after the unlock").isFalse();
            // The entry is gone for the next registry once it expired, since the removal cannot reach Redis.
            FencedLock taken = next.obtain("held", true);
            assertThat(taken.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as("taken by the next registry").isTrue();
            taken.unlock();
        }
        finally {
            goneClient.shutdown();
        }
    }

    /** Acquires and releases {@code key} on the cut-off registry, so that its entry lingers. */
    private void lockUntilLingering(String key) {
        FencedLock lock = this.cutOff.obtain(key);
        lock.lock();
        lock.unlock();
        assertThat(this.raw.sync().zcard(this.cutOff.keyspace().queue(key))).as("entries of '%s' after an unlock", key)
            .isEqualTo(1);
    }

    private static Duration since(long nanoTime) {
        return Duration.ofNanos(System.nanoTime() - nanoTime);
    }
}
