package io.github.distlock.zookeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sweeper's bookkeeping without a server: which of a store's entries count as orphans, and
 * that no call it waits on can keep a lock from being swept for ever.
 */
class EntrySweeperTests {

    private static final String TAG = "0123456789ab";

    private static final String LOCK_NODE = "/locks/#orders";

    private static final long NEVER = Long.MAX_VALUE / 4;

    private final List<String> deleted = new ArrayList<>();

    private final Consumer<String> delete = this.deleted::add;

    private static String entry(String protection, int sequence) {
        return "_c_" + protection + "-" + TAG + "-e-" + String.format("%010d", sequence);
    }

    @Test
    void onlyTaggedEntriesThatAreNotOwnedAreSwept() {
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        long token = sweeper.createStarted("orders");
        sweeper.createEnded(token, "orders", LOCK_NODE + "/" + entry("a", 1), false);

        int swept = sweeper.sweep("orders", LOCK_NODE, List.of(entry("a", 1), entry("b", 2),
                "_c_c-ffffffffffff-e-0000000003", "e-0000000004"), this.delete);

        assertThat(swept).isEqualTo(1);
        assertThat(this.deleted).containsExactly(LOCK_NODE + "/" + entry("b", 2));
    }

    @Test
    void nothingIsSweptWhileACreateOfTheLockIsPending() {
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        long token = sweeper.createStarted("orders");
        sweeper.createStarted("payments");

        assertThat(sweeper.sweep("orders", LOCK_NODE, List.of(entry("b", 2)), this.delete)).isZero();
        sweeper.createEnded(token, "orders", null, true);
        assertThat(sweeper.sweep("orders", LOCK_NODE, List.of(entry("b", 2)), this.delete)).isEqualTo(1);
    }

    @Test
    void aCreateThatIsNeverAnsweredStopsBlockingAndMakesItsLockSuspect() {
        EntrySweeper sweeper = new EntrySweeper(TAG, 0);
        sweeper.createStarted("orders");
        assertThat(sweeper.isCreatePending("orders")).isTrue();

        sweeper.expireStaleCalls();

        assertThat(sweeper.isCreatePending("orders")).isFalse();
        assertThat(sweeper.isSuspect("orders")).isTrue();
        assertThat(sweeper.sweep("orders", LOCK_NODE, List.of(entry("b", 2)), this.delete)).isEqualTo(1);
    }

    @Test
    void aDeleteThatIsNeverAnsweredLeavesItsNodeToTheSweep() {
        EntrySweeper sweeper = new EntrySweeper(TAG, 0);
        String path = LOCK_NODE + "/" + entry("a", 1);
        sweeper.createEnded(sweeper.createStarted("orders"), "orders", path, false);
        sweeper.deleteStarted("orders", path);
        assertThat(sweeper.isOwned(path)).isTrue();

        sweeper.expireStaleCalls();

        assertThat(sweeper.isOwned(path)).isFalse();
        assertThat(sweeper.isSuspect("orders")).isTrue();
    }

    @Test
    void anAnsweredDeleteEndsOwnershipAndAnOwnedNodeIsKeptWhileItsDeleteIsPending() {
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        String path = LOCK_NODE + "/" + entry("a", 1);
        sweeper.createEnded(sweeper.createStarted("orders"), "orders", path, false);
        sweeper.deleteStarted("orders", path);
        sweeper.expireStaleCalls();
        // A sweep must not race the release's own delete: that would read as a lost hold.
        assertThat(sweeper.sweep("orders", LOCK_NODE, List.of(entry("a", 1)), this.delete)).isZero();

        sweeper.deleteEnded(path);

        assertThat(sweeper.isOwned(path)).isFalse();
    }

    @Test
    void aNodeItsOwnReleaseDeletedIsNotSweptFromAQueueReadBeforeThat() {
        // A waiter of the process read the queue while another of its entries was being released: the read still
        // lists that entry, which is no orphan (sweeping it cost a delete and a WARN about a lost create's answer).
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        String path = LOCK_NODE + "/" + entry("a", 1);
        sweeper.createEnded(sweeper.createStarted("orders"), "orders", path, false);
        sweeper.deleteStarted("orders", path);
        sweeper.deleteEnded(path);

        assertThat(sweeper.sweep("orders", LOCK_NODE, List.of(entry("a", 1)), this.delete)).isZero();

        // Forgotten once no read can be that old, so the memory stays bounded.
        EntrySweeper forgetting = new EntrySweeper(TAG, 0);
        forgetting.createEnded(forgetting.createStarted("orders"), "orders", path, false);
        forgetting.deleteStarted("orders", path);
        forgetting.deleteEnded(path);
        forgetting.expireStaleCalls();
        assertThat(forgetting.sweep("orders", LOCK_NODE, List.of(entry("a", 1)), this.delete)).isEqualTo(1);
    }

    @Test
    void aSuspectLockStaysSuspectUntilACleanReadAfterItSettled() {
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        sweeper.suspect("orders");
        List<String> read = new ArrayList<>();

        sweeper.sweepSuspects(NEVER, (key, done) -> {
            read.add(key);
            done.accept(true);
        });
        assertThat(read).containsExactly("orders");
        assertThat(sweeper.isSuspect("orders")).as("clean, but read before it settled").isTrue();

        sweeper.sweepSuspects(0, (key, done) -> done.accept(false));
        assertThat(sweeper.isSuspect("orders")).as("settled, but the read found orphans or failed").isTrue();

        sweeper.sweepSuspects(0, (key, done) -> done.accept(true));
        assertThat(sweeper.isSuspect("orders")).isFalse();
    }

    @Test
    void aLockIsReadOnceAtATimeUntilTheReadIsAnsweredOrStale() {
        EntrySweeper sweeper = new EntrySweeper(TAG, NEVER);
        sweeper.suspect("orders");
        List<Consumer<Boolean>> unanswered = new ArrayList<>();

        sweeper.sweepSuspects(0, (key, done) -> unanswered.add(done));
        sweeper.sweepSuspects(0, (key, done) -> unanswered.add(done));
        assertThat(unanswered).hasSize(1);

        EntrySweeper expiring = new EntrySweeper(TAG, 0);
        expiring.suspect("orders");
        List<Consumer<Boolean>> reads = new ArrayList<>();
        expiring.sweepSuspects(0, (key, done) -> reads.add(done));
        expiring.expireStaleCalls();
        expiring.sweepSuspects(0, (key, done) -> reads.add(done));
        assertThat(reads).as("a read never answered does not stop the next").hasSize(2);
    }
}
