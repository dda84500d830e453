package io.github.distlock.fault;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.RedisServer;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.distlock.testsupport.BoundedCalls.assertAGiveUpReturnsAtItsTimeoutWhileFrozen;
import static io.github.distlock.testsupport.BoundedCalls.assertBoundedWhileDown;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis failing under the locks: restarts with and without persistence, a frozen server, a server
 * that is not there at start. Calls end within their bounds (G10), holds Redis kept survive,
 * holds Redis forgot are reported lost (G5), fences keep increasing (G3), and locking resumes once
 * Redis answers again.
 */
@FaultInjectionTest
class RedisFaultIntegrationTests {

    private static final Duration TTL = Duration.ofSeconds(10);

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    private static final Duration LONG = Duration.ofSeconds(30);

    private RedisServer redis;

    private RedisClient holderClient;

    private RedisClient waiterClient;

    private RedisLockRegistry holder;

    private RedisLockRegistry waiter;

    private void start(boolean persistent) {
        this.redis = RedisServer.start(persistent);
        String namespace = "fault-" + UUID.randomUUID() + ":";
        this.holderClient = RedisClient.create(this.redis.uri());
        this.waiterClient = RedisClient.create(this.redis.uri());
        this.holder = registry(this.holderClient, namespace, "holder");
        this.waiter = registry(this.waiterClient, namespace, "waiter");
        // A cold JVM on a loaded machine may take longer than the request timeout to connect the
        // first time; the tests start from connected registries (a server missing at start has its own test).
        await().atMost(LONG).ignoreExceptions().until(() -> {
            this.holder.connect().get();
            this.waiter.connect().get();
            return true;
        });
    }

    private RedisLockRegistry registry(RedisClient client, String namespace, String owner) {
        return RedisLockRegistry.builder(client).namespace(namespace).leaseTtl(TTL).ownerIdentity(owner)
            .requestTimeout(REQUEST_TIMEOUT).description("Redis at " + this.redis.uri()).build();
    }

    @AfterEach
    void tearDown() {
        if (this.redis != null) {
            this.redis.resume();
        }
        if (this.holder != null) {
            this.holder.close();
            this.waiter.close();
            this.holderClient.shutdown();
            this.waiterClient.shutdown();
        }
        if (this.redis != null) {
            this.redis.close();
        }
    }

    @Test
    void holdSurvivesARestartWithPersistenceAndTheWaiterGetsTheLockAfterwards() throws Exception {
        start(true);
        FencedLock held = this.holder.obtain("restart", true);
        held.lock();
        long holderFence = held.getFence();
        CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(this.waiter.obtain("restart", true), LONG);
        await().atMost(LONG).until(() -> this.waiter.getWaitingThreadCount() == 1);

        this.redis.kill();
        assertBoundedWhileDown(this.holder.obtain("another-key", true));
        this.redis.restart();

        // The entries came back from the append-only file with their expiry: nothing was lost.
        await().atMost(LONG).until(() -> this.holder.describeLock("restart", 10).waiters().size() == 1);
        assertThat(held.isLockedByCurrentThread()).isTrue();
        assertThat(next).isNotDone();
        held.unlock();
        assertThat(next.get(LONG.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(holderFence);
        assertThat(this.holder.getStatistics().getHoldsLost()).isZero();
    }

    @Test
    void aTimedWaitThatEndsWhileRedisIsFrozenReturnsAtItsTimeout() throws Exception {
        start(false);
        FencedLock held = this.holder.obtain("late", true);
        held.lock();
        assertAGiveUpReturnsAtItsTimeoutWhileFrozen(this.waiter.obtain("late", true),
                () -> this.waiter.getWaitingThreadCount() == 1,
                () -> this.holder.describeLock("late", 10).waiters().isEmpty(), this.redis::pause, this.redis::resume);
        held.unlock();
    }

    @Test
    void restartWithoutPersistenceLosesTheHoldSaysSoAndFencesKeepIncreasing() throws Exception {
        start(false);
        FencedLock held = this.holder.obtain("amnesia", true);
        held.lock();
        long holderFence = held.getFence();
        CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(this.waiter.obtain("amnesia", true), LONG);
        await().atMost(LONG).until(() -> this.waiter.getWaitingThreadCount() == 1);

        this.redis.restart();

        // Redis forgot every key: the holder learns it at its next renewal, the waiter queues again.
        await().atMost(LONG).pollInSameThread().until(() -> !held.isLockedByCurrentThread());
        long nextFence = next.get(LONG.toSeconds(), TimeUnit.SECONDS);
        // The fence counter was lost too; started again from the Redis clock, it is still ahead.
        assertThat(nextFence).isGreaterThan(holderFence);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock)
            .withMessageContaining("amnesia");
        assertThat(this.holder.getStatistics().getHoldsLost()).isEqualTo(1);
    }

    @Test
    void callsEndWithinTheirBoundsWhileRedisIsFrozenAndHoldsSurviveAShortFreeze() throws Exception {
        start(false);
        FencedLock held = this.holder.obtain("frozen", true);
        held.lock();

        this.redis.pause();
        assertBoundedWhileDown(this.waiter.obtain("frozen", false));
        long start = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class)
            .isThrownBy(() -> this.waiter.obtain("other-key", true).lock())
            .withMessageContaining("Redis at " + this.redis.uri());
        // An untimed lock() bears a failing store for one request timeout; allow a loaded machine more.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        start = System.nanoTime();
        assertThatExceptionOfType(IllegalStateException.class)
            .isThrownBy(() -> this.waiter.describeLock("frozen", 10))
            .withMessageContaining("Redis at " + this.redis.uri());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        this.redis.resume();

        assertThat(held.isLockedByCurrentThread()).isTrue();
        held.unlock();
        FencedLock after = this.waiter.obtain("frozen", true);
        assertThat(after.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        after.unlock();
    }

    @Test
    void redisMissingAtStartFailsWithinTheBoundAndLockingWorksOnceItIsUp() throws Exception {
        start(false);
        this.redis.kill();
        // Fresh clients: they have never reached Redis.
        RedisClient client = RedisClient.create(this.redis.uri());
        try (RedisLockRegistry cold = registry(client, "cold:", "cold")) {
            assertThat(cold.connect()).failsWithin(LONG)
                .withThrowableOfType(ExecutionException.class)
                .withMessageContaining("Redis at " + this.redis.uri());
            FencedLock lock = cold.obtain("cold", true);
            long start = System.nanoTime();
            assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> lock.tryLock(500, TimeUnit.MILLISECONDS))
                .withMessageContaining("Redis at " + this.redis.uri());
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));

            this.redis.restart();
            // Polled on this thread: the lock must be held by the thread that unlocks it.
            await().atMost(LONG).pollInSameThread().ignoreExceptions().until(() -> lock.tryLock(1, TimeUnit.SECONDS));
            assertThat(lock.getFence()).isPositive();
            lock.unlock();
        }
        finally {
            client.shutdown();
        }
    }

    @Test
    void removalsRedisDidNotConfirmAreRetriedUntilItAnswers() throws Exception {
        start(false);
        FencedLock held = this.holder.obtain("unconfirmed", true);
        held.lock();
        CompletableFuture<Boolean> gaveUp = new CompletableFuture<>();
        FencedLock waiting = this.waiter.obtain("unconfirmed", true);
        Thread waiterThread = new Thread(() -> {
            try {
                gaveUp.complete(!waiting.tryLock(3, TimeUnit.SECONDS));
            }
            catch (Throwable ex) {
                gaveUp.completeExceptionally(ex);
            }
        }, "giving-up");
        waiterThread.start();
        String queue = this.holder.getNamespace() + "{unconfirmed}:q";
        await().atMost(LONG).until(() -> "2".equals(this.redis.command("ZCARD", queue)));

        // Frozen while the waiter gives up and the holder releases: neither removal is confirmed.
        this.redis.pause();
        assertThat(gaveUp.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        held.unlock();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        this.redis.resume();

        // Both are removed in the background long before their 10 s TTL would have ended them.
        long resumedAt = System.nanoTime();
        await().atMost(LONG).until(() -> "0".equals(this.redis.command("ZCARD", queue)));
        assertThat(Duration.ofNanos(System.nanoTime() - resumedAt)).isLessThan(TTL.dividedBy(2));
        FencedLock next = this.waiter.obtain("unconfirmed", true);
        assertThat(next.tryLock(0, TimeUnit.SECONDS)).isTrue();
        next.unlock();
    }
}
