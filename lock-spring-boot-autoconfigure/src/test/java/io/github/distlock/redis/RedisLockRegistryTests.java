package io.github.distlock.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/** Bad builder input is refused with a message that names the setting and the value. */
class RedisLockRegistryTests {

    private final RedisClient client = RedisClient.create(RedisURI.create("redis://127.0.0.1:1"));

    @AfterEach
    void shutdown() {
        this.client.shutdown();
    }

    @Test
    void rejectsNamespacesWithBracesOrEmpty() {
        assertThatIllegalArgumentException().isThrownBy(() -> RedisLockRegistry.builder(this.client).namespace("a{b}:"))
            .withMessage("Redis namespace must not contain '{' or '}' (they mark the hash tag of each lock key), "
                    + "but was 'a{b}:'");
        assertThatIllegalArgumentException().isThrownBy(() -> RedisLockRegistry.builder(this.client).namespace(""))
            .withMessage("Redis namespace must not be empty");
    }

    @Test
    void rejectsLeaseTtlsBelowTheMinimumOrWithFractionsOfMilliseconds() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RedisLockRegistry.builder(this.client).leaseTtl(Duration.ofMillis(299)))
            .withMessage("Redis lease TTL must be at least 300ms, but was PT0.299S");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RedisLockRegistry.builder(this.client).leaseTtl(Duration.ofNanos(1_000_000_001)))
            .withMessageContaining("whole number of milliseconds");
        assertThat(RedisLockRegistry.leaseTtlProblem(Duration.ofMillis(300))).isNull();
        assertThat(RedisLockRegistry.leaseTtlProblem(null)).isNotNull();
    }

    @Test
    void rejectsOwnerIdentitiesWithLineBreaksAndNonPositiveTimeouts() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RedisLockRegistry.builder(this.client).ownerIdentity("a\nb"))
            .withMessage("Owner identity must not contain line breaks, but was 'a\\nb'");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> RedisLockRegistry.builder(this.client).requestTimeout(Duration.ZERO))
            .withMessage("Request timeout must be positive, but was PT0S");
    }

    @Test
    void acceptsStandaloneAndClusterClientsOnly() {
        assertThatNullPointerException().isThrownBy(() -> RedisLockRegistry.builder(null))
            .withMessage("Redis client must not be null");
        RedisClusterClient cluster = RedisClusterClient.create(RedisURI.create("redis://127.0.0.1:1"));
        try (RedisLockRegistry registry = RedisLockRegistry.builder(cluster).build()) {
            assertThat(registry.getNamespace()).isEqualTo(RedisLockRegistry.DEFAULT_NAMESPACE);
            assertThat(registry.getLeaseTtl()).isEqualTo(RedisLockRegistry.DEFAULT_LEASE_TTL);
        }
        finally {
            cluster.shutdown();
        }
    }
}
