package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.List;

import io.github.distlock.core.Fences;
import io.github.distlock.nemesis.HistoryEvent.Grant;
import io.github.distlock.nemesis.Violation.Kind;
import org.junit.jupiter.api.Test;

import static io.github.distlock.nemesis.HistoryEvent.Call.LOCK;
import static io.github.distlock.nemesis.HistoryEvent.Call.TRY_LOCK_TIMEOUT;
import static io.github.distlock.nemesis.HistoryEvent.Failure.TIMEOUT;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.BLACK_HOLE;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.CLOCK_STEP;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.DELAY;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.DELETE_ENTRIES;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.KILL_MEMBER;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.PAUSE_WORKER;
import static io.github.distlock.nemesis.HistoryEvent.FaultKind.RESET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Each rule of the checker, fed a realistic run that keeps it and the same run with one thing gone
 * wrong: a checker that cannot fail proves nothing. Times are milliseconds since the run started.
 */
class CheckerTests {

    static final Bounds BOUNDS = new Bounds(Duration.ofSeconds(1), Duration.ofMillis(500), Duration.ofMillis(200),
            Duration.ofMillis(300), Duration.ofMillis(20), false);

    private final Checker checker = new Checker(BOUNDS);

    /**
     * Four workers on keys a and b through a pause, a data loss and a kill, with everything the
     * library must do about them done in time. Everything after 4000 ms is free for a test to add.
     */
    static TestHistory cleanRunWithoutObservation() {
        return new TestHistory().run(42, "etcd")
            // Plain handoffs of a between workers.
            .hold("w1:1", "a", 100, 10, 20, 100)
            .hold("w2:1", "a", 200, 30, 110, 200)
            // w1 holds b and takes it again on the same thread: one hold, one fence.
            .request("w1:2", "T", "b", false, LOCK, -1, 40).grant("w1:2", 1000, 50).write("w1:2", 1000, 51)
            .request("w1:3", "T", "b", false, LOCK, -1, 60).grant("w1:3", 1000, 60).release("w1:3", 70)
            .release("w1:2", 90)
            // Fair waiters on b served in the order they came; the last one gives up at its timeout.
            .request("w2:2", "b", true, LOCK, -1, 55).grant("w2:2", 2000, 120).write("w2:2", 2000, 121)
            .release("w2:2", 150)
            .request("w3:2", "b", true, TRY_LOCK_TIMEOUT, 1000, 80).grant("w3:2", 3000, 160).write("w3:2", 3000, 161)
            .release("w3:2", 170)
            .request("w4:1", "b", true, TRY_LOCK_TIMEOUT, 30, 100).refuse("w4:1", TIMEOUT, 131)
            // w1 is paused holding a; its lease expires and w2 gets a; once resumed, w1's write is
            // refused, the library reports the loss and the unlock throws.
            .fault("f1", PAUSE_WORKER, "w1", false, 300, 2000)
            .request("w1:4", "a", false, LOCK, -1, 250).grant("w1:4", 400, 260).write("w1:4", 400, 261)
            .hold("w2:3", "a", 500, 270, 1400, 1450)
            .write("w1:4", 400, 2001).loss("w1", "a", 400, 400, 2005).releaseLost("w1:4", 2010)
            // etcd loses w3's entry of a; w4 gets a; w3 is told in time, and its late write is refused.
            .fault("f2", DELETE_ENTRIES, "etcd-0", true, 2500, 2510)
            .request("w3:3", "a", false, LOCK, -1, 2390).grant("w3:3", 600, 2400).write("w3:3", 600, 2401)
            .hold("w4:2", "a", 700, 2450, 2520, 2600)
            .loss("w3", "a", 600, 600, 2700).write("w3:3", 600, 2710).releaseLost("w3:3", 2720)
            // w4 is killed holding b and waiting for a: its entry outlives it until its lease ends.
            .request("w4:3", "b", false, LOCK, -1, 2900).grant("w4:3", 4000, 2910).write("w4:3", 4000, 2911)
            .request("w4:4", "a", false, LOCK, -1, 2990)
            .kill("w4", 3000)
            .hold("w3:4", "b", 5000, 2950, 4000, 4050)
            // Both keys serve again after the last fault.
            .hold("w1:5", "a", 800, 3100, 3110, 3200);
    }

    static TestHistory cleanRun() {
        return cleanRunWithoutObservation().observe(0, 0, 10_000);
    }

    /** Both keys granted again after a fault a test added, with fences above any before. */
    static TestHistory servingAgainAt(TestHistory history, long atMillis) {
        return history.hold("w1:90", "a", 50_000, atMillis, atMillis + 10, atMillis + 20)
            .hold("w1:91", "b", 60_000, atMillis + 30, atMillis + 40, atMillis + 50);
    }

    @Test
    void cleanRunBreaksNoRule() {
        History history = cleanRun().build();
        assertThat(this.checker.check(history)).isEmpty();
        assertThat(history.operations().stream().filter((op) -> op.reentrant()).map(History.Operation::op))
            .containsExactly("w1:3");
        assertThat(history.writes().stream().filter((write) -> !write.accepted())).hasSize(2);
    }

    @Test
    void overlapWithoutAFaultBreaksMutualExclusion() {
        TestHistory run = cleanRun().hold("w1:6", "a", 900, 4300, 4310, 4400).hold("w2:6", "a", 1000, 4320, 4350, 4420);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.MUTUAL_EXCLUSION);
        assertThat(violations.get(0).key()).isEqualTo("a");
        assertThat(violations.get(0).detail()).contains("w1:6", "fence 900", "w2:6", "fence 1000",
                "overlap from 4.350s", "no data-loss fault");
    }

    @Test
    void holderKilledWhileItUnlocksHeldOnlyUntilItsUnlockBegan() {
        // The store applied w2's release and granted w3 before the SIGKILL reached w2, which never
        // recorded the outcome of its unlock: the hold ended when the call began.
        TestHistory killedWhileUnlocking = cleanRun().request("w2:6", "c", false, LOCK, -1, 2920)
            .grant("w2:6", 10, 2921).write("w2:6", 10, 2922).unlocking("w2:6", 2930)
            .hold("w3:6", "c", 20, 2925, 2940, 2950).kill("w2", 2960).hold("w1:6", "c", 30, 3300, 3310, 3320);
        assertThat(this.checker.check(killedWhileUnlocking.build())).isEmpty();
        // Without the record of the unlock, the same history is an overlap.
        TestHistory killedHolding = cleanRun().request("w2:6", "c", false, LOCK, -1, 2920)
            .grant("w2:6", 10, 2921).write("w2:6", 10, 2922)
            .hold("w3:6", "c", 20, 2925, 2940, 2950).kill("w2", 2960).hold("w1:6", "c", 30, 3300, 3310, 3320);
        assertThat(this.checker.check(killedHolding.build())).extracting(Violation::kind)
            .containsExactly(Kind.MUTUAL_EXCLUSION);
    }

    @Test
    void overlapDuringDataLossNeedsTheOlderHolderToldInTime() {
        // A Redis restart without persistence loses w1's entry; w2 gets a; w1 learns only 650 ms later.
        TestHistory run = cleanRun().fault("f3", KILL_MEMBER, "redis", true, 4300, 4310)
            .request("w1:6", "a", false, LOCK, -1, 4240).grant("w1:6", 900, 4250).write("w1:6", 900, 4251)
            .release("w1:6", 4450)
            .hold("w2:6", "a", 1000, 4260, 4350, 4400)
            .loss("w1", "a", 900, 900, 5000)
            .hold("w3:6", "b", 7000, 4600, 4610, 4650);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.LATE_LOSS_REPORT);
        assertThat(violations.get(0).detail()).contains("w1:6", "w2:6", "during a data-loss fault",
                "w1 reported no loss of fence 900 by 4.650s (only at 5.000s)");
    }

    /** w1 holds c's entry, keeps it, a delete takes it from the store, w2 gets c, and w1 passes it on locally. */
    private static TestHistory entryLostThenPassed() {
        return servingAgainAt(cleanRun(), 4500).hold("w1:6", "c", Fences.of(5, 0), 4240, 4250, 4260)
            .fault("f3", DELETE_ENTRIES, "zk-0", true, 4300, 4310)
            .hold("w2:6", "c", Fences.of(6, 0), 4320, 4350, 4400)
            .request("w1:7", "c", false, LOCK, -1, 4355).grant("w1:7", Fences.of(5, 1), 4356)
            .write("w1:7", Fences.of(5, 1), 4357).release("w1:7", 4370);
    }

    @Test
    void localPassOfAnEntryLostBeforeThePassWasAskedForNeedsItsHolderToldInTime() {
        // w1 got c's entry from the store and kept it; a delete took the entry from the store; w2 got c; one of w1's
        // threads was passed the kept entry (the next pass) before the store told w1, after the fault had healed.
        long entry = Fences.of(5, 0);
        long pass = Fences.of(5, 1);
        long other = Fences.of(6, 0);
        Bounds strict = new Bounds(BOUNDS.ttl(), BOUNDS.election(), BOUNDS.waitOverrun(), BOUNDS.lossReport(),
                BOUNDS.fairnessSlack(), true);
        for (Checker checker : List.of(this.checker, new Checker(strict))) {
            // Told of nothing: the overlap is a late report (not a plain overlap: the data-loss fault explains it).
            assertThat(checker.check(entryLostThenPassed().build())).extracting(Violation::kind)
                .contains(Kind.LATE_LOSS_REPORT)
                .doesNotContain(Kind.MUTUAL_EXCLUSION);
            assertThat(checker.check(entryLostThenPassed().loss("w1", "c", entry, pass, 4380).build())).isEmpty();
        }
        // A pass of the same entry whose predecessor is not in the history counts from its own request.
        TestHistory unchained = servingAgainAt(cleanRun(), 4500).fault("f3", DELETE_ENTRIES, "zk-0", true, 4300, 4310)
            .hold("w2:6", "c", other, 4320, 4350, 4400)
            .request("w1:7", "c", false, LOCK, -1, 4355).grant("w1:7", pass, 4356).release("w1:7", 4370)
            .loss("w1", "c", pass, pass, 4380);
        assertThat(new Checker(strict).check(unchained.build())).extracting(Violation::kind)
            .contains(Kind.MUTUAL_EXCLUSION, Kind.FENCE_ORDER);
    }

    @Test
    void overlapWhileTheOlderHolderIsCutOffNeedsItToldInTime() {
        // w1's traffic is black-holed; its lease ends in the store and w2 gets a; w1 learns in time.
        TestHistory toldInTime = cleanRun().fault("f3", BLACK_HOLE, "w1", false, 4300, 8000)
            .request("w1:6", "a", false, LOCK, -1, 4240).grant("w1:6", 900, 4250).write("w1:6", 900, 4251)
            .hold("w2:6", "a", 1000, 4260, 4350, 4400)
            .loss("w1", "a", 900, 900, 4500).releaseLost("w1:6", 4510)
            .hold("w3:6", "b", 7000, 8100, 8110, 8150).hold("w3:7", "a", 1100, 8200, 8210, 8250);
        assertThat(this.checker.check(toldInTime.build())).isEmpty();
        TestHistory toldLate = cleanRun().fault("f3", BLACK_HOLE, "w1", false, 4300, 8000)
            .request("w1:6", "a", false, LOCK, -1, 4240).grant("w1:6", 900, 4250).write("w1:6", 900, 4251)
            .hold("w2:6", "a", 1000, 4260, 4350, 4400)
            .loss("w1", "a", 900, 900, 5000).releaseLost("w1:6", 5010)
            .hold("w3:6", "b", 7000, 8100, 8110, 8150).hold("w3:7", "a", 1100, 8200, 8210, 8250);
        assertThat(this.checker.check(toldLate.build())).extracting(Violation::kind)
            .containsExactly(Kind.LATE_LOSS_REPORT);
    }

    @Test
    void fenceBelowAnEarlierOneBreaksFenceOrder() {
        TestHistory run = cleanRun().request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 750, 4300)
            .release("w2:6", 4350);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.FENCE_ORDER);
        assertThat(violations.get(0).detail()).contains("w2:6", "fence 750", "after w1:5", "fence 800");
    }

    @Test
    void fencesMayStartOverAfterDataLossUnlessTheStorePromisesOtherwise() {
        TestHistory run = servingAgainAt(cleanRun().fault("f3", DELETE_ENTRIES, "etcd-0", true, 4200, 4210)
            .request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 750, 4300).release("w2:6", 4350), 4400);
        assertThat(this.checker.check(run.build())).isEmpty();
        Bounds strict = new Bounds(BOUNDS.ttl(), BOUNDS.election(), BOUNDS.waitOverrun(), BOUNDS.lossReport(),
                BOUNDS.fairnessSlack(), true);
        assertThat(new Checker(strict).check(run.build())).extracting(Violation::kind)
            .containsExactly(Kind.FENCE_ORDER);
    }

    @Test
    void lowerFenceRecordedLateByAPausedWorkerIsFineOnceReportedLost() {
        // The store grants w2 fence 900, then w2 is paused before it records the grant; its lease
        // expires, w3 gets fence 1000; w2 resumes, records its grant, and must report the loss.
        TestHistory run = cleanRun().fault("f3", PAUSE_WORKER, "w2", false, 4305, 6000)
            .request("w2:6", "a", false, LOCK, -1, 4290)
            .hold("w3:6", "a", 1000, 4295, 5400, 5450)
            .grant("w2:6", 900, 6001).releaseLost("w2:6", 6010);
        run = servingAgainAt(run, 6100);
        assertThat(this.checker.check(run.build())).extracting(Violation::kind)
            .containsExactly(Kind.FENCE_ORDER, Kind.SILENT_LOSS);
        assertThat(this.checker.check(run.loss("w2", "a", 900, 900, 6005).build())).isEmpty();
    }

    @Test
    void workerKilledWhilePausedNeedsNoHealAndNoLossReport() {
        // w2 is paused holding a, its lease expires, w3 gets a; then w2 is killed without a SIGCONT.
        TestHistory run = cleanRun().fault("f3", PAUSE_WORKER, "w2", false, 4305, -1)
            .request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 900, 4300)
            .hold("w3:6", "a", 1000, 4295, 5400, 5450)
            .kill("w2", 5500);
        List<Violation> violations = this.checker.check(servingAgainAt(run, 5600).build());
        assertThat(violations).isEmpty();
        assertThat(run.build().faults()).filteredOn((fault) -> fault.id().equals("f3"))
            .extracting(History.Window::heal).containsExactly(TestHistory.nanos(5500));
    }

    @Test
    void rejectedWriteOfAHoldNeverReportedLostIsASilentLoss() {
        // A proxy cuts w2 off from etcd; its lease expires and w3 gets a, but w2's library never
        // notices: it still writes, the register refuses, and nothing reports the loss.
        TestHistory run = cleanRun().fault("f3", BLACK_HOLE, "proxy-w2", false, 4310, 5800)
            .request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 900, 4300).write("w2:6", 900, 4301)
            .hold("w3:6", "a", 1000, 4320, 5400, 5450)
            .write("w2:6", 900, 5500).release("w2:6", 5900);
        run = servingAgainAt(run, 6000);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.MUTUAL_EXCLUSION, Kind.SILENT_LOSS);
        assertThat(violations.get(1).detail()).contains("5.500s the register rejected the write of w2:6",
                "it had accepted 1000",
                "w2 reported no loss of fence 900 by 5.800s");
    }

    @Test
    void unlockThatThrewLockLostWithoutALossReportIsASilentLoss() {
        TestHistory run = cleanRun().request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 900, 4300)
            .releaseLost("w2:6", 4400);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.SILENT_LOSS);
        assertThat(violations.get(0).detail()).contains("unlock of w2:6", "threw LockLostException at 4.400s");
    }

    @Test
    void unlockThatThrewLockLostLateIsJudgedFromItsAnswer() {
        // The unlock waited a second for the store's answer to its delete (its server was lost meanwhile), learnt
        // from it that the entry was gone, and reported the loss at once.
        TestHistory run = cleanRun().request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 900, 4300)
            .releaseLost("w2:6", 4400, 5400);
        assertThat(this.checker.check(run.loss("w2", "a", 900, 900, 5450).build())).isEmpty();
        TestHistory late = cleanRun().request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 900, 4300)
            .releaseLost("w2:6", 4400, 5400);
        List<Violation> violations = this.checker.check(late.loss("w2", "a", 900, 900, 5800).build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.SILENT_LOSS);
        assertThat(violations.get(0).detail()).contains("threw LockLostException at 5.400s",
                "w2 reported no loss of fence 900 by 5.700s");
    }

    @Test
    void lowerFenceRecordedLateDuringADataLossIsFineOnceReportedLost() {
        // w2's entry (fence 900) is the head when a delete hits the key: w2 reads that it holds, the delete removes
        // its entry, w3's entry (fence 1000) is granted, and w2 records its grant only then. Its hold was lost: it
        // must say so, even where fences survive data loss.
        Bounds strict = new Bounds(BOUNDS.ttl(), BOUNDS.election(), BOUNDS.waitOverrun(), BOUNDS.lossReport(),
                BOUNDS.fairnessSlack(), true);
        TestHistory run = cleanRun().fault("f3", DELETE_ENTRIES, "etcd-0", true, 4300, 4340)
            .request("w2:6", "a", false, LOCK, -1, 4290)
            .hold("w3:6", "a", 1000, 4295, 4310, 4315)
            .grant("w2:6", 900, 4320).release("w2:6", 4330);
        run = servingAgainAt(run, 4400);
        assertThat(new Checker(strict).check(run.build())).extracting(Violation::kind)
            .containsExactly(Kind.FENCE_ORDER);
        assertThat(new Checker(strict).check(run.loss("w2", "a", 900, 900, 4335).build())).isEmpty();
    }

    @Test
    void callThatAnswered3sPastIts1sTimeoutOverran() {
        TestHistory run = cleanRun().request("w2:6", "b", false, TRY_LOCK_TIMEOUT, 1000, 4300)
            .refuse("w2:6", TIMEOUT, 8300);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.WAIT_OVERRUN);
        assertThat(violations.get(0).detail()).contains("w2:6", "1000 ms timeout", "answered at 8.300s",
                "3.000s past its timeout");
    }

    @Test
    void timeSpentPausedDoesNotCountAgainstATimeout() {
        TestHistory run = cleanRun().fault("f3", PAUSE_WORKER, "w2", false, 4400, 7400)
            .request("w2:6", "b", false, TRY_LOCK_TIMEOUT, 1000, 4300).refuse("w2:6", TIMEOUT, 7600);
        assertThat(this.checker.check(servingAgainAt(run, 7700).build())).isEmpty();
    }

    @Test
    void requestOfALiveWorkerWithoutAnAnswerHangs() {
        TestHistory run = cleanRun().request("w2:6", "a", false, LOCK, -1, 4300);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.HANG);
        assertThat(violations.get(0).detail()).contains("w2:6", "asked at 4.300s", "no answer by the end at 10.000s");
    }

    @Test
    void holdOfALiveWorkerNeverReleasedHangs() {
        TestHistory run = cleanRun().request("w2:6", "a", false, LOCK, -1, 4300).grant("w2:6", 900, 4310);
        assertThat(this.checker.check(run.build())).extracting(Violation::kind).containsExactly(Kind.HANG);
    }

    @Test
    void fairWaiterServedAfterALaterOneBreaksFairOrder() {
        TestHistory run = cleanRun().hold("w3:6", "b", 6000, 4240, 4250, 4500)
            .request("w1:6", "b", true, LOCK, -1, 4300)
            .request("w2:6", "b", true, LOCK, -1, 4400).grant("w2:6", 6100, 4510).release("w2:6", 4550)
            .grant("w1:6", 6200, 4560).release("w1:6", 4600);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.FAIR_ORDER);
        assertThat(violations.get(0).detail()).contains("w1:6", "waited from 4.300s", "w2:6", "waiting from 4.400s",
                "granted at 4.510s", "granted only at 4.560s");
    }

    @Test
    void fairOrderIsNotJudgedForWaitsThatAFaultOverlaps() {
        TestHistory run = cleanRun().hold("w3:6", "b", 6000, 4240, 4250, 4500)
            .fault("f3", DELAY, "proxy-w1", false, 4350, 4360)
            .request("w1:6", "b", true, LOCK, -1, 4300)
            .request("w2:6", "b", true, LOCK, -1, 4400).grant("w2:6", 6100, 4510).release("w2:6", 4550)
            .grant("w1:6", 6200, 4560).release("w1:6", 4600);
        assertThat(this.checker.check(servingAgainAt(run, 4700).build())).isEmpty();
    }

    @Test
    void fairOrderIsNotJudgedForWaitsThatStartBeforeTheStoreServesAgain() {
        // The fault heals 100 ms before w1 asks: within the election bound, its request may still be reconnecting.
        TestHistory run = cleanRun().hold("w3:6", "b", 6000, 4240, 4250, 4500)
            .fault("f3", KILL_MEMBER, "postgres", false, 4100, 4200)
            .request("w1:6", "b", true, LOCK, -1, 4300)
            .request("w2:6", "b", true, LOCK, -1, 4400).grant("w2:6", 6100, 4510).release("w2:6", 4550)
            .grant("w1:6", 6200, 4560).release("w1:6", 4600);
        assertThat(this.checker.check(servingAgainAt(run, 4700).build())).isEmpty();
    }

    @Test
    void fairWaiterThatTimedOutBeforeTheLaterGrantWasNotOvertaken() {
        TestHistory run = cleanRun().hold("w3:6", "b", 6000, 4240, 4250, 4500)
            .request("w1:6", "b", true, TRY_LOCK_TIMEOUT, 100, 4300).refuse("w1:6", TIMEOUT, 4402)
            .request("w2:6", "b", true, LOCK, -1, 4400).grant("w2:6", 6100, 4510).release("w2:6", 4550);
        assertThat(this.checker.check(run.build())).isEmpty();
    }

    @Test
    void keyNeverGrantedAfterTheLastHealDidNotRecover() {
        TestHistory run = cleanRun().fault("f3", BLACK_HOLE, "proxy-all", false, 4300, 5000)
            .hold("w1:6", "a", 900, 5050, 5100, 5150);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.NO_RECOVERY);
        assertThat(violations.get(0).key()).isEqualTo("b");
        assertThat(violations.get(0).detail()).contains("within 1.500s", "last heal at 5.000s",
                "never granted again");
    }

    @Test
    void faultThatNeverHealedCannotShowRecovery() {
        TestHistory run = cleanRun().fault("f3", RESET, "proxy-w3", false, 4300, -1);
        List<Violation> violations = this.checker.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.NO_RECOVERY);
        assertThat(violations.get(0).detail()).contains("f3", "reset of proxy-w3", "never healed");
    }

    @Test
    void entryLeftInTheStoreIsAGhost() {
        List<Violation> violations = this.checker.check(cleanRun().observe(1, 0, 10_001).build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.GHOST);
        assertThat(violations.get(0).detail()).contains("1 entries and 0 sessions",
                "/distributed-lock/a/00000001 of w4");
    }

    @Test
    void runWithoutALookAtTheStoreCannotShowItLeftNothing() {
        assertThat(this.checker.check(cleanRunWithoutObservation().build())).extracting(Violation::kind)
            .containsExactly(Kind.GHOST);
    }

    @Test
    void historyThatContradictsItselfIsRejected() {
        List<HistoryEvent> events = cleanRun().add(new Grant(TestHistory.nanos(4300), "w2", "w2:99", 900)).events();
        assertThatIllegalArgumentException().isThrownBy(() -> History.of(events))
            .withMessageContaining("outcome of an op never requested");
        List<HistoryEvent> unlockOfARefusal = cleanRun().unlocking("w4:1", 4300).events();
        assertThatIllegalArgumentException().isThrownBy(() -> History.of(unlockOfARefusal))
            .withMessageContaining("unlock of an op that holds nothing");
    }

    /** As a database's run is held: fences must survive data loss. */
    private static final Checker DATABASE = new Checker(new Bounds(BOUNDS.ttl(), BOUNDS.election(), BOUNDS.waitOverrun(),
            BOUNDS.lossReport(), BOUNDS.fairnessSlack(), true));

    private static TestHistory clockStep(TestHistory history, long stepSeconds, long startMillis, long healMillis) {
        return history.fault("f3", CLOCK_STEP, History.clockStepTarget("postgres", Duration.ofSeconds(stepSeconds)),
                false, startMillis, healMillis);
    }

    @Test
    void overlapAcrossAForwardClockStepNeedsTheOlderHolderToldInTime() {
        // The database's clock jumps 10 s ahead at 4.3 s: w1's session expires before its next renewal, w2 takes a.
        TestHistory overlap = clockStep(cleanRun(), 10, 4300, 4800)
            .request("w1:6", "a", false, LOCK, -1, 4250).grant("w1:6", 900, 4260).write("w1:6", 900, 4261)
            .hold("w2:6", "a", 1000, 4270, 4400, 4450);
        TestHistory toldInTime = servingAgainAt(overlap.loss("w1", "a", 900, 900, 4500).releaseLost("w1:6", 4600), 4900);
        assertThat(DATABASE.check(toldInTime.build())).isEmpty();
        TestHistory toldLate = servingAgainAt(clockStep(cleanRun(), 10, 4300, 4800)
            .request("w1:6", "a", false, LOCK, -1, 4250).grant("w1:6", 900, 4260).write("w1:6", 900, 4261)
            .hold("w2:6", "a", 1000, 4270, 4400, 4450).loss("w1", "a", 900, 900, 4900).releaseLost("w1:6", 4950), 5000);
        List<Violation> violations = DATABASE.check(toldLate.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.LATE_LOSS_REPORT);
        assertThat(violations.get(0).detail()).contains("during a forward clock step", "w1 reported no loss of fence 900");
    }

    @Test
    void overlapWhileTheClockIsSteppedBackBreaksMutualExclusion() {
        // A step back only puts expiries off: an overlap while it is on is excused by nothing, told or not. Its heal
        // (a step forward) is far later.
        TestHistory run = servingAgainAt(clockStep(cleanRun(), -10, 4300, 8000)
            .request("w1:6", "a", false, LOCK, -1, 4320).grant("w1:6", 900, 4330).write("w1:6", 900, 4331)
            .hold("w2:6", "a", 1000, 4340, 4400, 4450).loss("w1", "a", 900, 900, 4410).releaseLost("w1:6", 4500), 8100);
        List<Violation> violations = DATABASE.check(run.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.MUTUAL_EXCLUSION);
        assertThat(violations.get(0).detail()).contains("no forward clock step");
    }

    @Test
    void aFenceBelowAnEarlierOneAfterABackwardClockStepBreaksFenceOrderEvenIfItsHoldWasReportedLost() {
        // w2's grant of a lower fence, recorded after w1's higher one, while the clock is stepped back.
        TestHistory back = servingAgainAt(clockStep(cleanRun(), -10, 4300, 8000)
            .hold("w1:6", "a", 900, 4300, 4320, 4330)
            .request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 850, 4360).write("w2:6", 850, 4361)
            .loss("w2", "a", 850, 850, 4400).releaseLost("w2:6", 4450), 8100);
        List<Violation> violations = DATABASE.check(back.build());
        assertThat(violations).extracting(Violation::kind).containsExactly(Kind.FENCE_ORDER);
        assertThat(violations.get(0).detail()).contains("w2:6", "fence 850", "fence 900",
                "a backward step of the store's clock excuses no fence going back");
        // The same grant around a step forward: the lower fence's session may have expired early, as a
        // deletion would end it, and its loss was reported in time.
        TestHistory forward = servingAgainAt(clockStep(cleanRun(), 10, 4300, 8000)
            .hold("w1:6", "a", 900, 4300, 4320, 4330)
            .request("w2:6", "a", false, LOCK, -1, 4290).grant("w2:6", 850, 4360).write("w2:6", 850, 4361)
            .loss("w2", "a", 850, 850, 4400).releaseLost("w2:6", 4450), 8100);
        assertThat(DATABASE.check(forward.build())).isEmpty();
    }

    @Test
    void recoveryIsLongerByTheSizeOfABackwardClockStepOnly() {
        // A 2 s step back at 4.3 s (in effect by 5.8 s) keeps sessions renewed before it up to 2 s past a TTL:
        // keys must be granted again by 5.8 + 2 + TTL 1 + election 0.5 = 9.3 s.
        assertThat(DATABASE.check(servingAgainAt(clockStep(cleanRun(), -2, 4300, 4400), 9200).build())).isEmpty();
        List<Violation> late = DATABASE.check(servingAgainAt(clockStep(cleanRun(), -2, 4300, 4400), 9400).build());
        assertThat(late).extracting(Violation::kind).containsExactly(Kind.NO_RECOVERY, Kind.NO_RECOVERY);
        assertThat(late.get(0).detail()).contains("after the last backward clock step's effect plus its size at 7.800s");
        // A step forward healed at 4.4 s steps back then: 4.4 + 2 + 1.5 = 7.9 s.
        assertThat(DATABASE.check(servingAgainAt(clockStep(cleanRun(), 2, 4300, 4400), 7800).build())).isEmpty();
        assertThat(DATABASE.check(servingAgainAt(clockStep(cleanRun(), 2, 4300, 4400), 8000).build()))
            .extracting(Violation::kind).containsExactly(Kind.NO_RECOVERY, Kind.NO_RECOVERY);
        // Any other fault: TTL + election after its heal, 5.9 s.
        assertThat(DATABASE.check(servingAgainAt(cleanRun().fault("f3", KILL_MEMBER, "postgres", false, 4300, 4400),
                7800).build())).extracting(Violation::kind).containsExactly(Kind.NO_RECOVERY, Kind.NO_RECOVERY);
    }

    @Test
    void aClockStepsTargetNamesItsStep() {
        assertThat(History.clockStepTarget("mariadb", Duration.ofSeconds(-12))).isEqualTo("mariadb clock -12 s");
        assertThatIllegalArgumentException().isThrownBy(() -> History.clockStepTarget("mariadb", Duration.ZERO));
        TestHistory unnamed = cleanRun().fault("f3", CLOCK_STEP, "postgres", false, 4300, 4400);
        assertThatIllegalArgumentException().isThrownBy(() -> DATABASE.check(unnamed.build()))
            .withMessageContaining("names no step");
    }
}
