package io.github.distlock.store;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * What every {@link LockStore} promises below the lock core (see the store SPI's javadoc), tested
 * through the SPI alone: entries own a key one at a time in the order they were written, fences
 * increase in that order, a waiter that gives up or is interrupted leaves nothing behind, the one
 * reader names the holder, and a lost hold is reported once. Each store (in-memory, etcd, and the
 * stores to come) extends this kit against a real server, beside the registry-level
 * {@code AbstractLockRegistryContractTests}.
 *
 * <p>Unlike the registry kit, two entries of one store never reenter: the store has no notion of
 * threads, so every test may use {@link #store()} and {@link #peerStore()} alike.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class AbstractLockStoreContractTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ExecutorService threads = Executors.newCachedThreadPool();

    /** Losses reported to the stores' listener, in order; subclasses pass {@link #lossListener()} to their stores. */
    private final List<String> losses = new CopyOnWriteArrayList<>();

    private String key;

    /** @return the store under test, built with {@link #lossListener()} */
    protected abstract LockStore store();

    /** @return a store on the same backend that stands for another process (may be {@link #store()}) */
    protected abstract LockStore peerStore();

    /**
     * Ends {@code entry}'s hold behind the store's back, as an operator or an expired session
     * would (for etcd: deletes its key). Stores whose holds cannot be lost return false.
     * @param entry a held entry
     * @return whether the hold was ended
     * @throws Exception if the backend failed
     */
    protected abstract boolean endHoldBehindTheStoresBack(StoreEntry entry) throws Exception;

    /**
     * Ends {@code store}'s current session behind its back, as an expiry would (for etcd: revokes
     * its lease). Stores without sessions that can end return false.
     * @param store a store with a live session
     * @return whether the session was ended
     * @throws Exception if the backend failed
     */
    protected abstract boolean endSessionBehindTheStoresBack(LockStore store) throws Exception;

    /**
     * Makes the store take {@code entry}'s hold as lost while its key is still in the backend, as
     * when the session's deadline passes on this side before the backend expires it. Stores whose
     * holds cannot be lost return false.
     * @param entry a held entry
     * @return whether the hold was taken as lost
     */
    protected abstract boolean loseHoldAheadOfTheBackend(StoreEntry entry);

    /** @return the listener the subclass's stores report losses to */
    protected final HoldLossListener lossListener() {
        return (entry, reason) -> this.losses.add(entry.lockKey() + ": " + reason);
    }

    /** @return how long a try-once may take: the bound of an entry's first write */
    protected Duration responseTime() {
        return Duration.ofSeconds(2);
    }

    @BeforeEach
    void chooseKey(TestInfo testInfo) {
        this.key = testInfo.getTestMethod().map(method -> method.getName()).orElse("test") + "-" + UUID.randomUUID();
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        this.threads.shutdownNow();
        assertThat(this.threads.awaitTermination(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    private Wait attempt() {
        return Wait.timeout(responseTime().toNanos(), true);
    }

    private StoreEntry hold(LockStore store, String key) throws Exception {
        StoreEntry entry = store.newEntry(key, attempt());
        assertThat(entry.acquire(Wait.timeout(LONG.toNanos(), true), attempt())).as("acquired " + key).isTrue();
        assertThat(entry.isHolding()).isTrue();
        assertThat(entry.lostReason()).isNull();
        return entry;
    }

    /** Writes an entry on a thread of its own, which then waits for its turn within {@code wait}. */
    private Waiter waitInThread(LockStore store, Wait wait) throws Exception {
        StoreEntry entry = store.newEntry(this.key, attempt());
        CompletableFuture<Thread> thread = new CompletableFuture<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        CompletableFuture<Boolean> outcome = CompletableFuture.supplyAsync(() -> {
            thread.complete(Thread.currentThread());
            try {
                boolean acquired = entry.acquire(wait, attempt());
                interruptedAfter.set(Thread.interrupted());
                return acquired;
            }
            catch (Exception ex) {
                throw new CompletionException(ex);
            }
        }, this.threads);
        return new Waiter(entry, outcome, thread.get(LONG.toSeconds(), TimeUnit.SECONDS), interruptedAfter);
    }

    private record Waiter(StoreEntry entry, CompletableFuture<Boolean> outcome, Thread thread,
            AtomicBoolean interruptedAfter) {

        boolean acquired() throws Exception {
            return this.outcome.get(LONG.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** Releases {@code holder}; then {@code next} must get the key at once: nothing was left in its way. */
    private void releaseAndHoldPromptly(StoreEntry holder, LockStore next) throws Exception {
        assertThat(holder.release()).isTrue();
        long start = System.nanoTime();
        StoreEntry entry = hold(next, this.key);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(responseTime());
        assertThat(entry.release()).isTrue();
        awaitFree((next == store()) ? peerStore() : store());
    }

    private void awaitFree(LockStore store) {
        await().atMost(LONG).until(() -> store.holder(this.key) == null);
    }

    @Test
    void aFreeKeyIsOwnedAtOnceAndAnEntryBehindItDoesNotOwnIt() throws Exception {
        assertThat(store().holder(this.key)).isNull();
        StoreEntry first = hold(store(), this.key);
        StoreEntry second = peerStore().newEntry(this.key, attempt());
        assertThat(second.acquire(Wait.timeout(0, true), attempt())).isFalse();
        assertThat(second.isHolding()).isFalse();
        assertThat(second.ahead()).as("what the try-once saw ahead").isNotNull();
        assertThat(peerStore().holder(this.key)).isNotNull().isEqualTo(store().holder(this.key));
        assertThat(first.release()).isTrue();
        assertThat(first.isHolding()).isFalse();
        awaitFree(peerStore());
    }

    @Test
    void entriesOwnTheKeyInTheOrderTheyWereWrittenWithIncreasingFences() throws Exception {
        StoreEntry holder = hold(store(), this.key);
        Waiter first = waitInThread(peerStore(), Wait.timeout(LONG.toNanos(), true));
        await().atMost(LONG).until(first.entry()::isWaiting);
        Waiter second = waitInThread(store(), Wait.timeout(LONG.toNanos(), true));
        await().atMost(LONG).until(second.entry()::isWaiting);

        assertThat(holder.release()).isTrue();
        assertThat(first.acquired()).isTrue();
        assertThat(first.entry().fence()).isGreaterThan(holder.fence());
        assertThat(second.outcome()).as("the later entry waits for the earlier one").isNotDone();
        assertThat(second.entry().isWaiting()).isTrue();
        assertThat(first.entry().release()).isTrue();
        assertThat(second.acquired()).isTrue();
        assertThat(second.entry().fence()).isGreaterThan(first.entry().fence());
        assertThat(second.entry().release()).isTrue();
        awaitFree(store());
    }

    @Test
    void fencesKeepIncreasingAcrossStoresAndReleases() throws Exception {
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 6; i++) {
            StoreEntry entry = hold((i % 2 == 0) ? store() : peerStore(), this.key);
            assertThat(entry.fence()).isGreaterThan(previous);
            previous = entry.fence();
            assertThat(entry.release()).isTrue();
        }
    }

    @Test
    void aWaiterThatGivesUpLeavesNothingThatDelaysTheNext() throws Exception {
        StoreEntry holder = hold(store(), this.key);
        StoreEntry gaveUp = peerStore().newEntry(this.key, attempt());
        assertThat(gaveUp.acquire(Wait.timeout(Duration.ofMillis(200).toNanos(), true), attempt())).isFalse();
        releaseAndHoldPromptly(holder, store());
    }

    @Test
    void anInterruptedWaiterThrowsAndLeavesNothingBehind() throws Exception {
        StoreEntry holder = hold(store(), this.key);
        Waiter waiter = waitInThread(peerStore(), Wait.untimed(true));
        await().atMost(LONG).until(waiter.entry()::isWaiting);
        waiter.thread().interrupt();
        assertThatThrownBy(waiter::acquired).isInstanceOf(ExecutionException.class)
            .hasRootCauseInstanceOf(InterruptedException.class);
        assertThat(waiter.entry().isWaiting()).isFalse();
        releaseAndHoldPromptly(holder, peerStore());
    }

    @Test
    void anUninterruptibleWaiterKeepsWaitingAndKeepsTheInterrupt() throws Exception {
        StoreEntry holder = hold(store(), this.key);
        Waiter waiter = waitInThread(peerStore(), Wait.untimed(false));
        await().atMost(LONG).until(waiter.entry()::isWaiting);
        waiter.thread().interrupt();
        // Still queued after the interrupt: it ends only with the holder's release.
        await().during(Duration.ofMillis(300)).atMost(LONG)
            .until(() -> !waiter.outcome().isDone() && waiter.entry().isWaiting());
        assertThat(holder.release()).isTrue();
        assertThat(waiter.acquired()).isTrue();
        assertThat(waiter.interruptedAfter()).as("interrupt kept").isTrue();
        assertThat(waiter.entry().fence()).isGreaterThan(holder.fence());
        assertThat(waiter.entry().release()).isTrue();
    }

    @Test
    void distinctKeysNeverBlockEachOther() throws Exception {
        StoreEntry parent = hold(store(), this.key);
        for (String other : List.of(this.key + "/child", this.key + "/", this.key + "%2F", this.key + "\uD800")) {
            StoreEntry entry = peerStore().newEntry(other, attempt());
            assertThat(entry.acquire(Wait.timeout(0, true), attempt())).as(other).isTrue();
            assertThat(entry.release()).isTrue();
        }
        assertThat(parent.release()).isTrue();
    }

    @Test
    void aHoldEndedBehindTheStoresBackIsReportedOnceAndItsReleaseSaysSo() throws Exception {
        StoreEntry held = hold(store(), this.key);
        assumeThat(endHoldBehindTheStoresBack(held)).as("holds of this store can be lost").isTrue();
        await().atMost(LONG).until(() -> held.lostReason() != null);
        await().atMost(LONG).until(() -> !this.losses.isEmpty());
        assertThat(this.losses).singleElement().asString().startsWith(this.key + ": ");
        assertThat(held.release()).isFalse();
        assertThat(this.losses).hasSize(1);
        StoreEntry next = hold(peerStore(), this.key);
        assertThat(next.fence()).isGreaterThan(held.fence());
        assertThat(next.release()).isTrue();
    }

    @Test
    void aHoldReportedLostBeforeItsReleaseIsNotReleasedAsHeldThoughItsKeyWasStillThere() throws Exception {
        StoreEntry held = hold(store(), this.key);
        assumeThat(loseHoldAheadOfTheBackend(held)).as("holds of this store can be lost").isTrue();
        assertThat(held.lostReason()).isNotNull();
        assertThat(this.losses).singleElement().asString().startsWith(this.key + ": ");
        // The holder's unlock must say the hold was lost, as the report did, though the key could still be deleted.
        assertThat(held.release()).as("released as held").isFalse();
        assertThat(this.losses).hasSize(1);
        // What was left of it goes all the same.
        StoreEntry next = hold(peerStore(), this.key);
        assertThat(next.fence()).isGreaterThan(held.fence());
        assertThat(next.release()).isTrue();
    }

    @Test
    void aLostSessionEndsEveryHoldOnItOnceAndTheNextAcquisitionStartsANewOne() throws Exception {
        StoreEntry first = hold(store(), this.key);
        StoreEntry second = hold(store(), this.key + "-other");
        assertThat(store().isSessionAlive()).isTrue();
        assertThat(store().sessionRenewalAge()).isNotNull();
        assumeThat(endSessionBehindTheStoresBack(store())).as("sessions of this store can end").isTrue();
        await().atMost(LONG).until(() -> first.lostReason() != null && second.lostReason() != null);
        await().atMost(LONG).until(() -> this.losses.size() == 2);
        assertThat(this.losses).anySatisfy(loss -> assertThat(loss).startsWith(this.key + ": "))
            .anySatisfy(loss -> assertThat(loss).startsWith(this.key + "-other: "));
        // The store may learn that the session ended only at its next renewal.
        await().atMost(LONG).until(() -> !store().isSessionAlive());
        first.discard();
        second.discard();

        StoreEntry next = hold(store(), this.key);
        assertThat(next.fence()).isGreaterThan(first.fence());
        assertThat(store().isSessionAlive()).isTrue();
        assertThat(next.release()).isTrue();
        assertThat(this.losses).as("each lost hold reported once").hasSize(2);
        awaitFree(peerStore());
    }
}
