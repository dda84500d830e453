package io.github.distlock.fault;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Locks on Redis work again about at once after a long outage ends, also though the application
 * kept calling throughout: the store opens new connections itself (at most every 500 ms) instead of
 * waiting for the Lettuce client's own reconnects, whose pauses grow to 30 s (16 s after a 20 s
 * outage). Measured on this code: 0.15 s after Redis came back, after 20 s and after 45 s outages.
 */
@FaultInjectionTest
class RedisReconnectIntegrationTests {

    /** Long enough for Lettuce's own reconnect pauses (1, 2, 4, 8, 16 s) to outgrow the bound below. */
    private static final Duration OUTAGE = Duration.ofSeconds(20);

    /** A connect and a lock call, and a loaded machine's scheduling. */
    private static final Duration BACK_WITHIN = Duration.ofSeconds(5);

    @Test
    void lockedCallsWorkAgainWithinSecondsAfterALongOutageDuringWhichTheyFailed() throws Exception {
        try (RedisServer redis = RedisServer.start(false)) {
            new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        DistributedLockAutoConfiguration.class))
                .withPropertyValues("distributed-lock.store=redis", "distributed-lock.redis.request-timeout=1s",
                        "spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
                .run((context) -> {
                    FencedLock lock = context.getBean(LockRegistry.class).obtain("reconnect");
                    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> tryAndRelease(lock));

                    redis.kill();
                    // The outage is the scenario: calls keep coming, once a second, and fail.
                    long outageEnd = System.nanoTime() + OUTAGE.toNanos();
                    int failed = 0;
                    while (System.nanoTime() < outageEnd) {
                        try {
                            tryAndRelease(lock);
                        }
                        catch (LockAcquisitionException ex) {
                            assertThat(ex.getReason()).isEqualTo(LockAcquisitionException.Reason.STORE_UNAVAILABLE);
                            failed++;
                        }
                        Thread.sleep(1_000);
                    }
                    assertThat(failed).as("calls that failed during the outage").isPositive();
                    redis.restart();
                    long back = System.nanoTime();
                    await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> tryAndRelease(lock));
                    assertThat(Duration.ofNanos(System.nanoTime() - back)).as("from Redis back to the first lock taken")
                        .isLessThan(BACK_WITHIN);
                });
        }
    }

    private static boolean tryAndRelease(FencedLock lock) throws InterruptedException {
        if (!lock.tryLock(1, TimeUnit.SECONDS)) {
            return false;
        }
        lock.unlock();
        return true;
    }
}
