package io.github.distlock.etcd;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EntryMonitor}: a loss is reported as a lost hold exactly once, whichever of the final
 * read, the watch, the session and the release sees it first.
 */
class EntryMonitorTests {

    private final AtomicBoolean sessionAlive = new AtomicBoolean(true);

    private final EntryMonitor monitor = new EntryMonitor(this.sessionAlive::get);

    @Test
    void aLossBeforeTheHandoverRefusesTheHoldAndIsNoLostHold() {
        assertThat(this.monitor.markLost("deleted")).as("reported as a lost hold").isFalse();
        assertThat(this.monitor.becomeHolder()).isEqualTo(EntryMonitor.Handover.LOST);
        assertThat(this.monitor.isHolding()).isFalse();
        assertThat(this.monitor.lostReason()).isEqualTo("deleted");
    }

    @Test
    void aSessionThatEndedBeforeTheHandoverRefusesTheHold() {
        this.sessionAlive.set(false);
        assertThat(this.monitor.becomeHolder()).isEqualTo(EntryMonitor.Handover.LOST);
        assertThat(this.monitor.isHolding()).isFalse();
    }

    @Test
    void aLossAfterTheHandoverIsReportedOnce() {
        assertThat(this.monitor.becomeHolder()).isEqualTo(EntryMonitor.Handover.HOLDING);
        assertThat(this.monitor.markLost("deleted")).isTrue();
        assertThat(this.monitor.markLost("session ended")).isFalse();
        this.monitor.released();
        assertThat(this.monitor.lostAtRelease("gone at release")).as("already reported").isFalse();
        assertThat(this.monitor.lostReason()).isEqualTo("deleted");
    }

    @Test
    void aResyncDuringTheFinalReadAsksForAVerifiedHold() {
        this.monitor.beginRead();
        this.monitor.resync();
        this.monitor.endRead(null);
        assertThat(this.monitor.becomeHolder()).isEqualTo(EntryMonitor.Handover.HOLDING_UNVERIFIED);
        assertThat(this.monitor.resync()).as("a resync while holding asks for verification").isTrue();
    }

    @Test
    void aLossFoundOnlyByTheReleaseIsReportedByItOnce() {
        this.monitor.becomeHolder();
        this.monitor.released();
        assertThat(this.monitor.lostAtRelease("gone at release")).isTrue();
        assertThat(this.monitor.lostAtRelease("gone at release")).isFalse();
        assertThat(this.monitor.lostReason()).isEqualTo("gone at release");
    }

    @Test
    void aLossSeenWhileReleasingIsReportedByTheReleaseThatFindsTheEntryGone() {
        this.monitor.becomeHolder();
        this.monitor.released();
        assertThat(this.monitor.markLost("deleted")).as("no longer holding: not reported by the watch").isFalse();
        assertThat(this.monitor.lostAtRelease("gone at release")).as("reported by the release").isTrue();
        assertThat(this.monitor.lostReason()).isEqualTo("deleted");
    }
}
