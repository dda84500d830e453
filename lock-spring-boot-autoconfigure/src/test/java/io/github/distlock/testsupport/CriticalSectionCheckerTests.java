package io.github.distlock.testsupport;

import java.util.List;

import io.github.distlock.testsupport.CriticalSectionChecker.Report;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The checker that the fault-injection tests rely on must catch each broken guarantee, so each
 * kind of violation is fed to it here, without etcd.
 */
class CriticalSectionCheckerTests {

    @Test
    void orderlyJournalPassesAndReportsTheLongestGap() {
        Report report = replay(
                "p0 ENTER t0 5 1000", "p0 WRITE t0 5 1001 ACCEPTED", "p0 EXIT t0 5 1010",
                "p1 ENTER t0 9 1050", "p1 WRITE t0 9 1051 ACCEPTED", "p1 EXIT t0 9 1060",
                "p0 ENTER t1 12 1400", "p0 EXIT t1 12 1410").check(3);
        report.assertNoViolations();
        assertThat(report.completed()).isEqualTo(3);
        assertThat(report.longestGapMillis()).isEqualTo(340);
        assertThat(report.longestGapAt()).contains("p0 ENTER t1 12 1400");
    }

    @Test
    void overlappingHoldersAreReported() {
        Report report = replay("p0 ENTER t0 5 0", "p1 ENTER t0 6 1", "p1 EXIT t0 6 2", "p0 EXIT t0 5 3").check(2);
        assertThat(report.violations()).anySatisfy(v -> assertThat(v).startsWith("overlap at event 2")
            .contains("p0/t0 was still inside"));
        assertThatExceptionOfType(AssertionError.class).isThrownBy(report::assertNoViolations)
            .withMessageContaining("overlap");
    }

    @Test
    void fenceThatDoesNotIncreaseIsReported() {
        Report report = replay("p0 ENTER t0 7 0", "p0 EXIT t0 7 1", "p1 ENTER t0 7 2", "p1 EXIT t0 7 3").check(2);
        assertThat(report.violations()).singleElement().asString().startsWith("fence did not increase at event 3");
    }

    @Test
    void acceptedWriteOfASupersededHolderIsReported() {
        // p0 was paused while p1 took the lock; the resource must reject p0's write with fence 5.
        Report report = replay("p0 ENTER t0 5 0", "p1 ENTER t0 8 1", "p0 WRITE t0 5 2 ACCEPTED").check(0);
        assertThat(report.violations()).anySatisfy(v -> assertThat(v).startsWith("stale write accepted at event 3"));
        Report rejected = replay("p0 ENTER t0 5 0", "p0 WRITE t0 5 1 ACCEPTED", "p0 EXIT t0 5 2",
                "p1 ENTER t0 8 3", "p1 WRITE t0 8 4 ACCEPTED", "p0 WRITE t0 5 5 REJECTED", "p1 EXIT t0 8 6").check(2);
        rejected.assertNoViolations();
    }

    @Test
    void writeAcceptedBelowTheHighestAcceptedFenceIsReported() {
        Report report = replay("p0 WRITE t0 9 0 ACCEPTED", "p1 WRITE t0 4 1 ACCEPTED").check(0);
        assertThat(report.violations()).singleElement().asString().startsWith("stale write accepted at event 2");
    }

    @Test
    void lostAndUnfinishedIterationsAreReported() {
        Report report = replay("p0 ENTER t0 1 0", "p0 EXIT t0 1 1", "p0 ENTER t0 2 2").check(3);
        assertThat(report.violations()).containsExactly("entered but never left: p0/t0 with fence 2",
                "expected 3 completed critical sections, but recorded 1");
    }

    @Test
    void exitByAnotherThreadThanTheHolderIsReported() {
        Report report = replay("p0 ENTER t0 1 0", "p0 EXIT t1 1 1").check(0);
        assertThat(report.violations()).singleElement().asString()
            .startsWith("exit without a matching entry at event 2").contains("inside was p0/t0 with fence 1");
    }

    @Test
    void eventsRecordedInProcessAreCheckedInTheirOrder() {
        CriticalSectionChecker checker = new CriticalSectionChecker();
        checker.enter("local", "a", 3);
        checker.write("local", "a", 3, true);
        checker.exit("local", "a", 3);
        checker.enter("local", "b", 4);
        checker.enter("local", "c", 5);
        Report report = checker.check(1);
        assertThat(report.violations()).hasSize(2).first().asString().startsWith("overlap at event 5");
    }

    @Test
    void malformedJournalLinesAreRejectedNamingTheLine() {
        assertThatIllegalArgumentException().isThrownBy(() -> replay("p0 ENTER t0 1 0", "p0 LEAVE t0 1 1"))
            .withMessageStartingWith("journal line 2: no event kind in 'p0 LEAVE t0 1 1'");
        assertThatIllegalArgumentException().isThrownBy(() -> replay("p0 WRITE t0 1 1 MAYBE"))
            .withMessageContaining("expected ACCEPTED or REJECTED");
        assertThatIllegalArgumentException().isThrownBy(() -> replay("p0 ENTER t0 1"))
            .withMessageContaining("expected 5 words");
    }

    private static CriticalSectionChecker replay(String... lines) {
        CriticalSectionChecker checker = new CriticalSectionChecker();
        checker.replay(List.of(lines));
        return checker;
    }
}
