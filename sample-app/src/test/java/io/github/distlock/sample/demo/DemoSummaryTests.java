package io.github.distlock.sample.demo;

import java.time.LocalTime;
import java.util.List;
import java.util.Optional;

import io.github.distlock.sample.demo.DemoEvent.Kind;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DemoSummary} and {@link DemoEvent} on recorded demo output.
 */
class DemoSummaryTests {

    /** A fair run, as printed by three processes (interleaved by the orchestrator). */
    private static final String FAIR_RUN = """
            05:07:13.830 p1 worker 1 waiting
            05:07:13.928 p1 worker 2 waiting
            05:07:13.951 p1 worker 1 acquired (fence 2)
            05:07:14.131 p2 worker 3 waiting
            05:07:14.239 p2 worker 4 waiting
            05:07:14.431 p3 worker 5 waiting
            05:07:14.539 p3 worker 6 waiting
            05:07:14.952 p1 worker 1 released
            05:07:14.970 p1 worker 2 acquired (fence 3)
            05:07:15.971 p1 worker 2 released
            05:07:15.985 p2 worker 3 acquired (fence 4)
            05:07:16.986 p2 worker 3 released
            05:07:17.001 p2 worker 4 acquired (fence 5)
            05:07:18.002 p2 worker 4 released
            05:07:18.019 p3 worker 5 acquired (fence 6)
            05:07:19.020 p3 worker 5 released
            05:07:19.034 p3 worker 6 acquired (fence 7)
            05:07:20.035 p3 worker 6 released
            """;

    /**
     * An unfair run: worker 7, a newcomer of process 1 retrying tryLock(), barges ahead of its
     * process's waiting worker 2; processes 2 and 3 start once it holds the lock, and their first
     * workers are served before the second worker of the process ahead of them.
     */
    private static final String UNFAIR_RUN = """
            11:28:57.142 p1 worker 1 waiting
            11:28:57.146 p1 worker 1 acquired (fence 20)
            11:28:57.242 p1 worker 2 waiting
            11:28:57.344 p1 worker 7 waiting
            11:28:58.147 p1 worker 1 released
            11:28:58.162 p1 worker 7 acquired (fence 22)
            11:28:58.164 p2 worker 3 waiting
            11:28:58.264 p2 worker 4 waiting
            11:28:58.464 p3 worker 5 waiting
            11:28:58.564 p3 worker 6 waiting
            11:28:59.163 p1 worker 7 released
            11:28:59.174 p2 worker 3 acquired (fence 23)
            11:29:00.174 p2 worker 3 released
            11:29:00.189 p3 worker 5 acquired (fence 24)
            11:29:01.189 p3 worker 5 released
            11:29:01.204 p1 worker 2 acquired (fence 26)
            11:29:02.204 p1 worker 2 released
            11:29:02.217 p2 worker 4 acquired (fence 28)
            11:29:03.217 p2 worker 4 released
            11:29:03.230 p3 worker 6 acquired (fence 30)
            11:29:04.231 p3 worker 6 released
            """;

    @Test
    void fairRunKeepsArrivalOrder() {
        DemoSummary summary = DemoSummary.of(parse(FAIR_RUN));
        assertThat(summary.arrivalOrder()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(summary.acquisitionOrder()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(summary.arrivalOrderKept()).isTrue();
        assertThat(summary.servedOutOfOrder()).isZero();
        assertThat(summary.isComplete()).isTrue();
        assertThat(summary.isExclusive()).isTrue();
        assertThat(summary.fencesIncrease()).isTrue();
        // Worker 6 waited from 14.539 to 19.034.
        assertThat(summary.longestWaitMillis()).isEqualTo(4495);
        assertThat(summary.longestWaiter()).isEqualTo(6);
        assertThat(summary.handoffGapsMillis()).containsExactly(18L, 14L, 15L, 17L, 14L);
        assertThat(summary.describe(true)).contains("order kept        : yes, as fair=true promises")
            .contains("longest wait      : 4495 ms (worker 6)")
            .contains("handoff gap       : avg 15.6 ms, max 18 ms")
            .contains("mutual exclusion  : kept");
    }

    @Test
    void unfairRunReportsWhoWasServedAheadOfEarlierArrivalsAndWhetherOfTheSameProcess() {
        DemoSummary summary = DemoSummary.of(parse(UNFAIR_RUN));
        assertThat(summary.arrivalOrder()).containsExactly(1, 2, 7, 3, 4, 5, 6);
        assertThat(summary.acquisitionOrder()).containsExactly(1, 7, 3, 5, 2, 4, 6);
        assertThat(summary.arrivalOrderKept()).isFalse();
        assertThat(summary.overtakes()).containsExactly(new DemoSummary.Overtake(7, 1, 2, 1),
                new DemoSummary.Overtake(3, 2, 2, 1), new DemoSummary.Overtake(5, 3, 2, 1),
                new DemoSummary.Overtake(5, 3, 4, 2));
        assertThat(summary.overtakes().get(0).sameProcess()).isTrue();
        assertThat(summary.overtakes().get(1).sameProcess()).isFalse();
        assertThat(summary.servedOutOfOrder()).isEqualTo(3);
        assertThat(summary.isExclusive()).isTrue();
        assertThat(summary.fencesIncrease()).isTrue();
        // Worker 6 waited from 58.564 to 03.230.
        assertThat(summary.longestWaitMillis()).isEqualTo(4666);
        assertThat(summary.describe(false)).contains("""
                  order kept        : no, 3 of 7 workers were served out of arrival order (fair=false does not promise arrival order)
                  served ahead      : worker 7 (p1) ahead of worker 2 (p1, same process)
                                      worker 3 (p2) ahead of worker 2 (p1)
                                      worker 5 (p3) ahead of worker 2 (p1), worker 4 (p2)
                """.replace("\n", System.lineSeparator()));
        assertThat(summary.describe(true)).contains("fair=true promised it!");
    }

    @Test
    void workersThatArriveInTheSameMillisecondDoNotOvertakeEachOther() {
        DemoSummary summary = DemoSummary.of(parse("""
                10:00:00.000 p1 worker 1 waiting
                10:00:00.000 p2 worker 2 waiting
                10:00:00.010 p2 worker 2 acquired (fence 3)
                10:00:00.510 p2 worker 2 released
                10:00:00.520 p1 worker 1 acquired (fence 4)
                10:00:01.020 p1 worker 1 released
                """));
        assertThat(summary.overtakes()).isEmpty();
        assertThat(summary.arrivalOrderKept()).isTrue();
    }

    @Test
    void unfairRunThatHappensToKeepTheOrderSaysItWasNotPromised() {
        assertThat(DemoSummary.of(parse(FAIR_RUN)).describe(false))
            .contains("yes, this time (fair=false does not promise it)");
    }

    @Test
    void acquisitionBeforeThePreviousReleaseIsAViolation() {
        DemoSummary summary = DemoSummary.of(parse("""
                10:00:00.000 p1 worker 1 waiting
                10:00:00.010 p2 worker 2 waiting
                10:00:00.020 p1 worker 1 acquired (fence 5)
                10:00:00.500 p2 worker 2 acquired (fence 4)
                10:00:01.020 p1 worker 1 released
                10:00:01.500 p2 worker 2 released
                """));
        assertThat(summary.isExclusive()).isFalse();
        assertThat(summary.fencesIncrease()).isFalse();
        assertThat(summary.describe(true)).contains("VIOLATED (two holders at once) (fences not increasing)");
    }

    @Test
    void runAcrossMidnightIsOrderedByTime() {
        DemoSummary summary = DemoSummary.of(parse("""
                23:59:59.800 p1 worker 1 waiting
                23:59:59.900 p2 worker 2 waiting
                23:59:59.810 p1 worker 1 acquired (fence 1)
                00:00:00.810 p1 worker 1 released
                00:00:00.830 p2 worker 2 acquired (fence 2)
                00:00:01.830 p2 worker 2 released
                """));
        assertThat(summary.acquisitionOrder()).containsExactly(1, 2);
        assertThat(summary.arrivalOrderKept()).isTrue();
        assertThat(summary.longestWaitMillis()).isEqualTo(930);
        assertThat(summary.handoffGapsMillis()).containsExactly(20L);
    }

    @Test
    void workerThatNeverGotTheLockMakesTheRunIncomplete() {
        DemoSummary summary = DemoSummary.of(parse("""
                10:00:00.000 p1 worker 1 waiting
                10:00:00.010 p1 worker 1 acquired (fence 3)
                10:00:00.020 p2 worker 2 waiting
                10:00:01.010 p1 worker 1 released
                """));
        assertThat(summary.isComplete()).isFalse();
        assertThat(summary.acquisitionOrder()).containsExactly(1);
        assertThat(summary.describe(true)).contains("incomplete        : 1 of 2 workers did not finish");
    }

    @Test
    void eventLinesRoundTripAndOtherLinesAreNotEvents() {
        DemoEvent acquired = new DemoEvent(LocalTime.of(9, 5, 7, 123_000_000), 2, 4, Kind.ACQUIRED, 77);
        assertThat(acquired.format()).isEqualTo("09:05:07.123 p2 worker 4 acquired (fence 77)");
        assertThat(DemoEvent.parse(acquired.format())).contains(acquired);
        assertThat(DemoEvent.parse("09:05:07.123 p2 worker 4 released")).get()
            .extracting(DemoEvent::kind)
            .isEqualTo(Kind.RELEASED);
        assertThat(DemoEvent.parse("READY")).isEmpty();
        assertThat(DemoEvent.parse("2026-11-22 WARN something about worker 4 acquired")).isEmpty();
        assertThat(DemoEvent.parse("FAILED worker 3: java.lang.IllegalStateException")).isEqualTo(Optional.empty());
    }

    private static List<DemoEvent> parse(String output) {
        return output.lines().map(DemoEvent::parse).flatMap(Optional::stream).toList();
    }
}
