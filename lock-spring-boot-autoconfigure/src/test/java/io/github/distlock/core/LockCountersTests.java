package io.github.distlock.core;

import java.lang.reflect.Method;
import java.util.Arrays;

import io.github.distlock.LockStatistics;
import io.github.distlock.store.StoreEvents;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The totals a registry shows can be read by anyone and changed only through its counters. */
class LockCountersTests {

    @Test
    void statisticsOnlyReadAndTheCountersCountIntoThem() {
        assertThat(Arrays.stream(LockStatistics.class.getMethods()).map(Method::getName)).isNotEmpty()
            .allMatch(name -> name.startsWith("get"));

        LockCounters counters = new LockCounters();
        counters.acquired();
        counters.localHandoff();
        counters.timedOut();
        counters.failed();
        counters.holdLost();
        counters.holdsLost(2);
        counters.keptEntryLost();
        StoreEvents storeEvents = counters;
        storeEvents.sessionLost();
        storeEvents.backendError();
        storeEvents.backendError();
        LockStatistics statistics = counters.statistics();
        assertThat(statistics.getAcquired()).isEqualTo(2);
        assertThat(statistics.getLocalHandoffs()).isEqualTo(1);
        assertThat(statistics.getTimedOut()).isEqualTo(1);
        assertThat(statistics.getFailed()).isEqualTo(1);
        assertThat(statistics.getHoldsLost()).isEqualTo(3);
        assertThat(statistics.getKeptEntriesLost()).isEqualTo(1);
        assertThat(statistics.getSessionsLost()).isEqualTo(1);
        assertThat(statistics.getBackendErrors()).isEqualTo(2);
        assertThat(statistics).as("what users get cannot be cast back to what counts")
            .isNotInstanceOf(LockCounters.class).isNotInstanceOf(StoreEvents.class);
        assertThat(new LockCounters().statistics().getAcquired()).as("new counters start at zero").isZero();
    }
}
