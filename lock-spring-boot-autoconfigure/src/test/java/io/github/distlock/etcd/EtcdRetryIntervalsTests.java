package io.github.distlock.etcd;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** How often etcd calls are sent again, and the watch stream probed, for a given request timeout. */
class EtcdRetryIntervalsTests {

    @Test
    void anAttemptIsATwentiethOfTheRequestTimeoutWithinItsBounds() {
        assertThat(attempt(Duration.ofSeconds(5))).isEqualTo(Duration.ofMillis(250));
        assertThat(attempt(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(200));
        assertThat(attempt(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(1));
        // Never longer than the request timeout itself.
        assertThat(attempt(Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(100));
    }

    @Test
    void theWatchIsProbedAfterAFifthOfTheRequestTimeoutInSilence() {
        assertThat(probe(Duration.ofSeconds(5))).isEqualTo(Duration.ofSeconds(1));
        assertThat(probe(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(500));
        assertThat(probe(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(300));
    }

    private static Duration probe(Duration requestTimeout) {
        return Duration.ofNanos(EtcdLockStore.watchProbeNanos(requestTimeout.toNanos()));
    }

    private static Duration attempt(Duration requestTimeout) {
        return Duration.ofNanos(EtcdLockStore.idempotentAttemptNanos(requestTimeout.toNanos()));
    }
}
