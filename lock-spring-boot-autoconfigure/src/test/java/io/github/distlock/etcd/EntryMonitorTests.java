package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.github.distlock.store.Wait;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EntryMonitor}: a loss is reported as a lost hold exactly once, whichever of the final
 * read, the watch, the session and the release sees it first.
 */
class EntryMonitorTests {

    private static final long SHORT = TimeUnit.MILLISECONDS.toNanos(200);

    private static final long LONG = TimeUnit.SECONDS.toNanos(30);

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

    @Test
    void withTheWholeQueueReadTheWaiterIsWokenOnlyOnceNoEntryIsAheadAnyMore() throws InterruptedException {
        ByteSequence first = key("a_1");
        ByteSequence second = key("a_2");
        ByteSequence third = key("a_3");
        this.monitor.beginRead();
        // Deleted while the read was on the wire, after it was created: not ahead any more.
        this.monitor.deleted(first, 12);
        this.monitor.endReadOfWholeQueue(List.of(entry(third, 11), entry(second, 10), entry(first, 9)));
        assertThat(this.monitor.predecessor()).isEqualTo(third);
        this.monitor.deleted(third, 13);
        assertThat(this.monitor.predecessor()).as("the newest entry left ahead").isEqualTo(second);
        assertThat(this.monitor.awaitChange(Wait.timeout(SHORT, true), LONG)).as("woken with an entry ahead").isFalse();
        // A deletion older than the entry's creation belongs to an earlier entry with the same key.
        this.monitor.deleted(second, 8);
        assertThat(this.monitor.awaitChange(Wait.timeout(SHORT, true), LONG)).as("woken by an older entry's delete")
            .isFalse();
        this.monitor.deleted(second, 14);
        // Woken to read: the read, not the watch, decides whether the entry holds.
        assertThat(this.monitor.awaitChange(Wait.timeout(LONG, true), LONG)).as("woken to read the queue").isTrue();
        assertThat(this.monitor.predecessor()).isNull();
    }

    /**
     * A read retried after an attempt without an answer goes on (its first answer counts): that
     * answer settles it. A flag left from the retry made the waiter read once more at once.
     */
    @Test
    void aReadRetriedAfterAFailedAttemptAsksForNoFurtherReadOnceAnswered() throws Exception {
        this.monitor.beginRead();
        this.monitor.pauseBeforeReread(Wait.timeout(TimeUnit.MILLISECONDS.toNanos(10), false));
        assertThat(this.monitor.awaitChange(Wait.timeout(SHORT, false), LONG)).as("read again").isTrue();
        this.monitor.endRead(entry(key("a_1"), 5));
        assertThat(this.monitor.awaitChange(Wait.timeout(SHORT, false), LONG)).as("read once more").isFalse();
    }

    @Test
    void aHoldAfterARetriedReadNeedsNoVerification() throws Exception {
        this.monitor.beginRead();
        this.monitor.pauseBeforeReread(Wait.timeout(TimeUnit.MILLISECONDS.toNanos(10), false));
        this.monitor.endRead(null);
        assertThat(this.monitor.becomeHolder()).isEqualTo(EntryMonitor.Handover.HOLDING);
    }

    @Test
    void aResyncDuringARetriedReadStillAsksForAnotherRead() throws Exception {
        this.monitor.beginRead();
        this.monitor.pauseBeforeReread(Wait.timeout(TimeUnit.MILLISECONDS.toNanos(10), false));
        this.monitor.resync();
        this.monitor.endRead(entry(key("a_1"), 5));
        assertThat(this.monitor.awaitChange(Wait.timeout(SHORT, false), LONG)).isTrue();
    }

    private static ByteSequence key(String name) {
        return ByteSequence.from("/ns/#k/" + name, StandardCharsets.UTF_8);
    }

    private static KeyValue entry(ByteSequence key, long createRevision) {
        return new KeyValue(io.etcd.jetcd.api.KeyValue.newBuilder()
            .setKey(ByteString.copyFrom(key.getBytes()))
            .setValue(ByteString.copyFromUtf8("owner\nthread\n1"))
            .setCreateRevision(createRevision)
            .setModRevision(createRevision)
            .build(), ByteSequence.EMPTY);
    }
}
