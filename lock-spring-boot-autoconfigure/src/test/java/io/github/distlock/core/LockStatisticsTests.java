package io.github.distlock.core;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The totals a registry shows can be read by anyone and changed only through its recorder. */
class LockStatisticsTests {

    @Test
    void statisticsOnlyReadAndTheRecorderCountsIntoThem() {
        assertThat(Arrays.stream(LockStatistics.class.getDeclaredMethods())
            .filter(method -> Modifier.isPublic(method.getModifiers()) && !Modifier.isStatic(method.getModifiers()))
            .map(Method::getName)).isNotEmpty().allMatch(name -> name.startsWith("get"));
        assertThat(LockStatistics.class.getConstructors()).isEmpty();

        LockStatistics.Recorder recorder = LockStatistics.recorder();
        recorder.acquired();
        recorder.acquired();
        recorder.timedOut();
        recorder.failed();
        recorder.holdLost();
        recorder.sessionLost();
        recorder.backendError();
        LockStatistics statistics = recorder.statistics();
        assertThat(statistics.getAcquired()).isEqualTo(2);
        assertThat(statistics.getTimedOut()).isEqualTo(1);
        assertThat(statistics.getFailed()).isEqualTo(1);
        assertThat(statistics.getHoldsLost()).isEqualTo(1);
        assertThat(statistics.getSessionsLost()).isEqualTo(1);
        assertThat(statistics.getBackendErrors()).isEqualTo(1);
        assertThat(LockStatistics.recorder().statistics().getAcquired()).as("a new recorder starts at zero").isZero();
    }
}
