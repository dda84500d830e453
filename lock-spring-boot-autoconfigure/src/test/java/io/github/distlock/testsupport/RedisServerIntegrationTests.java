package io.github.distlock.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisServer} against a real {@code redis-server}: what the Redis store's tests will rely
 * on (a restart with and without persistence, a frozen server, clean-up) does what it says.
 */
class RedisServerIntegrationTests {

    @Test
    void startsOnALoopbackPortAndAnswersCommands() {
        try (RedisServer redis = RedisServer.start(false)) {
            assertThat(redis.port()).isPositive();
            assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis.command("PING")).isEqualTo("PONG");
            assertThat(redis.command("SET", "k", "v\r\nwith a line break")).isEqualTo("OK");
            assertThat(redis.command("GET", "k")).isEqualTo("v\r\nwith a line break");
            assertThat(redis.command("INCR", "counter")).isEqualTo("1");
            assertThat(redis.command("GET", "missing")).isNull();
            assertThatIllegalStateException().isThrownBy(() -> redis.command("INCR", "k"))
                .withMessageContaining("Redis refused 'INCR k'");
        }
    }

    @Test
    void aRestartWithoutPersistenceStartsEmptyOnTheSamePort() {
        try (RedisServer redis = RedisServer.start(false)) {
            int port = redis.port();
            redis.command("SET", "fence", "41");
            redis.restart();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.command("GET", "fence")).isNull();
        }
    }

    @Test
    void aRestartWithPersistenceKeepsEveryAcknowledgedWriteAlsoAfterACrash() {
        try (RedisServer redis = RedisServer.start(true)) {
            redis.command("SET", "fence", "41");
            redis.command("INCR", "fence");
            redis.kill();
            redis.restart();
            assertThat(redis.command("GET", "fence")).isEqualTo("42");
        }
    }

    @Test
    void aPausedServerAnswersNothingUntilResumed() {
        try (RedisServer redis = RedisServer.start(false)) {
            redis.pause();
            try {
                assertThatIllegalStateException().isThrownBy(() -> redis.command("PING"))
                    .withMessageContaining("did not answer PING");
            }
            finally {
                redis.resume();
            }
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    void closeEndsTheProcessAndRemovesItsDirectory() {
        RedisServer redis = RedisServer.start(false);
        long pid = redis.pid();
        Path directory = redis.directory();
        assertThat(Files.isDirectory(directory)).isTrue();
        redis.close();
        await().until(() -> !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false));
        assertThat(Files.exists(directory)).isFalse();
        redis.close();
    }
}
