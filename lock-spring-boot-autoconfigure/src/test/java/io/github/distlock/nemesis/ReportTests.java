package io.github.distlock.nemesis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The table a run prints, and its exit status. */
class ReportTests {

    private final Checker checker = new Checker(CheckerTests.BOUNDS);

    @Test
    void cleanRunPrintsItsCountsAndPasses() {
        Report report = Report.of(CheckerTests.cleanRun().build(), this.checker);
        String table = report.table();
        assertThat(table).containsPattern("(?m)^seed +42$")
            .containsPattern("(?m)^store +etcd$")
            .containsPattern("(?m)^started +2023-11-14T22:13:20Z, ran 10.000s$")
            .containsPattern("(?m)^faults +3$")
            .containsPattern("(?m)^  delete-entries +1$")
            .containsPattern("(?m)^  kill-worker +1$")
            .containsPattern("(?m)^  pause-worker +1$")
            .containsPattern("(?m)^holds +12$")
            .containsPattern("(?m)^register writes +14$")
            .containsPattern("(?m)^rejected writes +2$")
            .containsPattern("(?m)^losses reported +2 reports, 2 holds$")
            // w4 died holding b: b waited out its lease, from the kill at 3 s to w3's grant at 4 s.
            .containsPattern("(?m)^longest unavailability +1.000s for 'b' after kill w4 healed at 3.000s$")
            .containsPattern("(?m)^violations +0$")
            .containsPattern("(?m)^  mutual-exclusion +0$")
            .containsPattern("(?m)^  ghost +0$")
            .containsPattern("(?m)^result +PASS$");
        assertThat(report.exitStatus()).isZero();
    }

    @Test
    void runWithAViolationCountsAndListsItAndFails() {
        TestHistory run = CheckerTests.cleanRun().hold("w1:6", "a", 900, 4300, 4310, 4400)
            .hold("w2:6", "a", 1000, 4320, 4350, 4420);
        Report report = Report.of(run.build(), this.checker);
        assertThat(report.table()).containsPattern("(?m)^violations +1$")
            .containsPattern("(?m)^  mutual-exclusion +1$")
            .containsPattern("(?m)^result +FAIL$")
            .containsPattern("(?m)^4.350s mutual-exclusion 'a': w1:6 .* and w2:6 .* overlap from 4.350s");
        assertThat(report.exitStatus()).isOne();
    }
}
