package io.github.distlock.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockLoss;
import io.github.distlock.LockLostException;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs when a store's signals (a loss, an entry queued behind) arrive in the middle of
 * the core's own steps: a scripted store makes them arrive at exactly that point, which real
 * stores only do by chance. The store itself is not under test here; every store's own loss and
 * queue signals are tested against its real server.
 */
class LocalHandoffRaceTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    /** Long enough that only a release on a signal, not the timer, lets a test pass. */
    private static final LocalHandoff LONG_LINGER = new LocalHandoff(Duration.ofMinutes(1), Duration.ofMinutes(1));

    private final ScriptedStore store = new ScriptedStore();

    private final LockCounters statistics = new LockCounters();

    private final List<LockLoss> losses = new CopyOnWriteArrayList<>();

    /**
     * The store reports a loss while a thread takes the lingering entry: the taker does not get
     * it, so its hold is not lost; the process lost an entry it kept, and the hold unlocked before
     * (which the store never confirmed after its unlock) may have been lost.
     */
    @Test
    void aKeptEntryLostWhileBeingTakenIsNotReportedAsALostHold() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        lock.lock();
        long unlocked = lock.getFence();
        lock.unlock();
        ScriptedEntry kept = this.store.entries.get(0);
        kept.onNextLostReasonRead(() -> kept.lose("lease expired", core));
        lock.lock();
        try {
            assertThat(this.store.entries).as("a new entry instead of the lost one").hasSize(2);
            assertThat(Fences.storeFence(lock.getFence())).isEqualTo(this.store.entries.get(1).fence());
        }
        finally {
            lock.unlock();
        }
        assertThat(reportedLosses(1)).containsExactly(new LockLoss("sku", unlocked, unlocked, 1, true, "lease expired"));
        assertThat(this.statistics.statistics().getHoldsLost()).as("holds lost: the one unlocked").isOne();
        assertThat(this.statistics.statistics().getKeptEntriesLost()).as("kept entries lost").isOne();
        assertThat(kept.discarded.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("lost entry discarded").isTrue();
    }

    /**
     * A store may report losses from inside its own calls, for other keys as well (ZooKeeper loses
     * every entry of a session when asked about one): two threads taking kept entries of two keys,
     * each asked call reporting the other key's loss, must not wait for each other.
     */
    @Test
    void lossesReportedFromInsideAStoreCallForAnotherKeyDoNotDeadlock() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock first = core.obtain("first", false);
        FencedLock second = core.obtain("second", false);
        first.lock();
        first.unlock();
        second.lock();
        second.unlock();
        ScriptedEntry firstEntry = this.store.entries.get(0);
        ScriptedEntry secondEntry = this.store.entries.get(1);
        CyclicBarrier bothAsking = new CyclicBarrier(2);
        firstEntry.onNextLostReasonRead(() -> {
            meet(bothAsking);
            secondEntry.lose("session expired", core);
        });
        secondEntry.onNextLostReasonRead(() -> {
            meet(bothAsking);
            firstEntry.lose("session expired", core);
        });
        CompletableFuture<Boolean> takingFirst = CompletableFuture.supplyAsync(() -> unlockReportsLoss(first));
        CompletableFuture<Boolean> takingSecond = CompletableFuture.supplyAsync(() -> unlockReportsLoss(second));
        int unlocksReportingLoss = (takingFirst.get(BOUND.toMillis(), TimeUnit.MILLISECONDS) ? 1 : 0)
                + (takingSecond.get(BOUND.toMillis(), TimeUnit.MILLISECONDS) ? 1 : 0);
        // Which thread took its entry before the other reported it lost is up to the scheduler (a taker
        // may also see the loss before its report comes, or take, unlock and keep the entry before the
        // report, which then finds it kept): a loss counts as a lost hold when the taker held the entry,
        // and its unlock then says so; the holds unlocked on a lost entry count too, the first of each
        // key at least. Every count is one the listeners heard.
        long holdsLost = this.statistics.statistics().getHoldsLost();
        assertThat(holdsLost).as("holds lost").isGreaterThanOrEqualTo(2 + unlocksReportingLoss);
        await().atMost(BOUND).untilAsserted(() -> assertThat(this.losses.stream().mapToLong(LockLoss::holds).sum())
            .as("holds the listeners heard of").isEqualTo(holdsLost));
    }

    /**
     * The store finds a lingering entry lost while the timer gives it back (after the timer's last
     * look at it), and reports that once the key's state is gone: no thread held it then; the entry
     * the process kept was lost, and with it perhaps the hold unlocked before.
     */
    @Test
    void aKeptEntryLostWhileItIsGivenBackIsNotReportedAsALostHold() throws Exception {
        LockCore core = core(new LocalHandoff(Duration.ofMinutes(1), Duration.ofMillis(20)));
        FencedLock lock = core.obtain("sku", false);
        lock.lock();
        ScriptedEntry entry = this.store.entries.get(0);
        entry.onRelease(() -> entry.setLostReason("lease expired"));
        lock.unlock();
        assertThat(entry.released.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("given back").isTrue();
        await().atMost(BOUND).until(() -> core.activeKeys().isEmpty());
        // The store's report, late.
        core.holdLost(entry, "lease expired");
        assertThat(reportedLosses(1)).singleElement().satisfies((loss) -> assertThat(loss.unlocked()).isTrue());
        assertThat(this.statistics.statistics().getHoldsLost()).as("holds lost: the one unlocked").isOne();
        assertThat(this.statistics.statistics().getKeptEntriesLost()).as("kept entries lost").isOne();
    }

    /**
     * A fair acquisition gives the process's lingering entry back first; a store slow to confirm
     * that release keeps the acquisition no longer than an attempt's store calls may take.
     */
    @Test
    void aFairAcquisitionWaitsForTheGiveBackOfALingeringEntryOnlyAsLongAsAnAttempt() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock unfair = core.obtain("sku", false);
        unfair.lock();
        unfair.unlock();
        ScriptedEntry lingering = this.store.entries.get(0);
        CountDownLatch storeAnswers = new CountDownLatch(1);
        lingering.onRelease(() -> {
            try {
                storeAnswers.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        FencedLock fair = core.obtain("sku", true);
        try {
            CompletableFuture<Boolean> tried = CompletableFuture.supplyAsync(() -> {
                try {
                    boolean acquired = fair.tryLock(100, TimeUnit.MILLISECONDS);
                    if (acquired) {
                        fair.unlock();
                    }
                    return acquired;
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
            // An attempt's store calls get a second at least; the scripted store's release would take forever.
            assertThat(tried).succeedsWithin(Duration.ofSeconds(10));
        }
        finally {
            storeAnswers.countDown();
        }
        assertThat(lingering.released.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("given back").isTrue();
    }

    /**
     * A fair try comes while the timer gives the process's lingering entry back and the store has
     * not confirmed that release yet: it waits for the give-back under way (as a second fair
     * acquisition does for the first one's) rather than queue behind the entry and fail on a key
     * that no thread holds.
     */
    @Test
    void aFairTryWaitsForAGiveBackAlreadyUnderWay() throws Exception {
        CountDownLatch storeAnswers = new CountDownLatch(1);
        FencedLock fair = fairLockWhileTheTimerGivesBack(storeAnswers);
        CompletableFuture<Boolean> tried = new CompletableFuture<>();
        Thread trying = new Thread(() -> tried.complete(tryAndRelease(fair)), "fair-try");
        try {
            trying.start();
            await().atMost(BOUND).until(() -> tried.isDone() || trying.getState() == Thread.State.TIMED_WAITING);
            assertThat(tried).as("the try waits for the release under way").isNotDone();
        }
        finally {
            storeAnswers.countDown();
        }
        assertThat(tried).succeedsWithin(BOUND).as("acquired once the entry was given back").isEqualTo(true);
        assertThat(this.store.entries).as("the lingering entry, then the fair one's").hasSize(2);
    }

    /**
     * A fair try that waited its first attempt's whole bound for a give-back the store does not
     * confirm writes its entry with what is left of that bound, not with a second bound of its
     * own: waiting and writing together take no longer than one attempt.
     */
    @Test
    void aFairTryChargesItsWaitForAGiveBackToItsFirstAttempt() throws Exception {
        CountDownLatch storeAnswers = new CountDownLatch(1);
        FencedLock fair = fairLockWhileTheTimerGivesBack(storeAnswers);
        try {
            assertThat(fair.tryLock()).as("queued behind the entry the store has not released").isFalse();
        }
        finally {
            storeAnswers.countDown();
        }
        Wait written = this.store.attempts.get(1);
        assertThat(written.remainingNanos()).as("time the fair entry's write had left when this looked, ns")
            .isNotPositive();
    }

    /**
     * Holds passed on and unlocked with no store call before the store reported their entry lost:
     * a store that confirms an entry only by writing it cannot say when it vanished, so every one
     * of them may have overlapped another process's hold, and each is reported lost.
     */
    @Test
    void holdsPassedOnAndUnlockedBeforeTheLossOfTheirEntryAreReportedLost() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        List<Long> fences = lockAndUnlock(lock, 3);
        ScriptedEntry entry = this.store.entries.get(0);
        entry.lose("deleted by hand", core);
        assertThat(entry.discarded.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("lost entry dropped").isTrue();
        assertThat(reportedLosses(1)).containsExactly(new LockLoss("sku", fences.get(0), fences.get(2), 3, true,
                "deleted by hand"));
        assertThat(this.statistics.statistics().getHoldsLost()).as("holds lost").isEqualTo(3);
        assertThat(this.statistics.statistics().getKeptEntriesLost()).as("kept entries lost").isOne();
    }

    /**
     * A store that last showed the entry present after some holds were unlocked clears those: only
     * the holds unlocked since then may have overlapped another process's.
     */
    @Test
    void onlyHoldsUnlockedSinceTheStoreLastConfirmedTheEntryAreReportedLost() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        lockAndUnlock(lock, 2);
        ScriptedEntry entry = this.store.entries.get(0);
        entry.confirmedAt = System.nanoTime();
        List<Long> unconfirmed = lockAndUnlock(lock, 2);
        entry.onNextLostReasonRead(() -> entry.lose("failover", core));
        lock.lock();
        lock.unlock();
        assertThat(reportedLosses(1)).containsExactly(new LockLoss("sku", unconfirmed.get(0), unconfirmed.get(1), 2, true,
                "failover"));
        assertThat(this.statistics.statistics().getHoldsLost()).as("holds lost").isEqualTo(2);
    }

    /**
     * A loss while a thread holds a passed-on entry: that hold is reported at once and its unlock
     * throws; the holds passed on before it, already unlocked, are reported at that unlock.
     */
    @Test
    void aLossWhileAPassedOnHoldIsHeldAlsoReportsTheHoldsBeforeIt() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        List<Long> earlier = lockAndUnlock(lock, 2);
        lock.lock();
        long held = lock.getFence();
        this.store.entries.get(0).lose("lease expired", core);
        assertThat(reportedLosses(1)).containsExactly(new LockLoss("sku", held, held, 1, false, "lease expired"));
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class);
        assertThat(reportedLosses(2)).containsExactly(new LockLoss("sku", held, held, 1, false, "lease expired"),
                new LockLoss("sku", earlier.get(0), earlier.get(1), 2, true, "lease expired"));
        assertThat(this.statistics.statistics().getHoldsLost()).as("holds lost").isEqualTo(3);
    }

    /**
     * The store classifies a loss while a thread holds a passed-on entry, and the thread unlocks
     * (the entry said it was lost, so the unlock throws and the key's state goes) before the
     * report names the hold: it still names that hold's fence, local pass included, not the
     * entry's first. So does a report that comes only after such an unlock.
     */
    @Test
    void aLossReportNamesThePassedOnHoldAlsoWhenTheHoldLeftTheKeyMeanwhile() throws Exception {
        for (boolean reportAfterTheUnlock : new boolean[] { false, true }) {
            this.losses.clear();
            LockCore core = core(LONG_LINGER);
            FencedLock lock = core.obtain("sku-" + reportAfterTheUnlock, false);
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch unlockNow = new CountDownLatch(1);
            AtomicReference<@Nullable Throwable> unlocked = new AtomicReference<>();
            AtomicLong passedOn = new AtomicLong();
            Thread holder = new Thread(() -> {
                lockAndUnlock(lock, 1);
                lock.lock();
                passedOn.set(lock.getFence());
                holding.countDown();
                try {
                    unlockNow.await();
                    lock.unlock();
                }
                catch (Throwable ex) {
                    unlocked.set(ex);
                }
            }, "holder");
            holder.start();
            assertThat(holding.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(Fences.pass(passedOn.get())).as("a passed-on hold").isOne();
            ScriptedEntry entry = this.store.entries.get(this.store.entries.size() - 1);
            entry.setLostReason("deleted");
            Runnable holderUnlocks = () -> {
                unlockNow.countDown();
                try {
                    holder.join(BOUND.toMillis());
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            };
            if (reportAfterTheUnlock) {
                holderUnlocks.run();
            }
            else {
                // The core asks whether the store closed between classifying the loss and reporting it.
                this.store.onNextIsClosed(holderUnlocks);
            }
            core.holdLost(entry, "deleted");
            assertThat(holder.isAlive()).isFalse();
            assertThat(unlocked.get()).isInstanceOf(LockLostException.class);
            long first = Fences.of(entry.fence(), 0);
            await().atMost(BOUND).untilAsserted(() -> assertThat(this.losses).containsExactlyInAnyOrder(
                    new LockLoss(entry.lockKey(), passedOn.get(), passedOn.get(), 1, false, "deleted"),
                    new LockLoss(entry.lockKey(), first, first, 1, true, "deleted")));
        }
    }

    /**
     * A lingering entry whose give-back the store did not confirm: no store reports what its retry
     * in the background finds, so the holds unlocked since the store last confirmed the entry are
     * reported at once, as holds whose end the store cannot vouch for.
     */
    @Test
    void holdsOnAnEntryWhoseGiveBackIsNotConfirmedAreReportedLost() throws Exception {
        LockCore core = core(new LocalHandoff(Duration.ofMinutes(1), Duration.ofMillis(20)));
        FencedLock lock = core.obtain("sku", false);
        lock.lock();
        ScriptedEntry entry = this.store.entries.get(0);
        entry.failNextRelease = true;
        long fence = lock.getFence();
        lock.unlock();
        assertThat(reportedLosses(1)).singleElement().satisfies((loss) -> {
            assertThat(loss).isEqualTo(new LockLoss("sku", fence, fence, 1, true, loss.reason()));
            assertThat(loss.reason()).contains("not confirmed by scripted store (no answer in time)");
        });
        assertThat(this.statistics.statistics().getHoldsLost()).isOne();
    }

    /**
     * An unlock whose release the store did not confirm returns (the release goes on in the
     * background), so the listeners hear that the hold may have ended after the store lost it:
     * a fair hold, and an unfair one with the holds passed on before it.
     */
    @Test
    void anUnlockWhoseReleaseIsNotConfirmedReportsItsHoldAndThosePassedOnBefore() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock fair = core.obtain("fair", true);
        fair.lock();
        long fairFence = fair.getFence();
        this.store.entries.get(0).failNextRelease = true;
        fair.unlock();
        assertThat(reportedLosses(1)).extracting(LockLoss::firstFence, LockLoss::holds, LockLoss::unlocked)
            .containsExactly(tuple(fairFence, 1, true));
        FencedLock unfair = core.obtain("unfair", false);
        List<Long> passed = lockAndUnlock(unfair, 2);
        unfair.lock();
        long last = unfair.getFence();
        ScriptedEntry entry = this.store.entries.get(1);
        entry.failNextRelease = true;
        // Another process queued: the entry goes back to the store at this unlock instead of lingering.
        entry.queuedBehind().run();
        unfair.unlock();
        assertThat(reportedLosses(2).get(1)).extracting(LockLoss::firstFence, LockLoss::lastFence, LockLoss::holds)
            .containsExactly(passed.get(0), last, 3);
    }

    /**
     * Listeners run on a thread of their own, never under the key's gate: one that locks the very
     * key it is told about neither re-enters the gate of the thread that found the loss nor blocks it.
     */
    @Test
    void aListenerMayLockTheKeyItIsToldAbout() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        List<Boolean> listenerLocked = new CopyOnWriteArrayList<>();
        core.addLossListener((loss) -> {
            FencedLock again = core.obtain(loss.key(), false);
            try {
                // Waits for the thread that found the loss, which holds the key: it never waits for this one.
                boolean locked = again.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                listenerLocked.add(locked);
                if (locked) {
                    again.unlock();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        this.store.exclusive = true;
        lockAndUnlock(lock, 2);
        ScriptedEntry kept = this.store.entries.get(0);
        kept.onNextLostReasonRead(() -> kept.lose("deleted by hand", core));
        // Were the listener run here, under the gate, its hold would linger on an entry this acquisition queues behind.
        assertThat(lock.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the acquisition that found the loss").isTrue();
        lock.unlock();
        await().atMost(BOUND).until(() -> listenerLocked.size() == 1);
        assertThat(listenerLocked).containsExactly(true);
        lock.lock();
        lock.unlock();
        assertThat(reportedLosses(1)).hasSize(1);
    }

    /** @return the losses reported so far, once there are {@code count}: listeners are told on a thread of their own */
    private List<LockLoss> reportedLosses(int count) {
        await().atMost(BOUND).until(() -> this.losses.size() >= count);
        return this.losses;
    }

    /** @return the fences of {@code times} holds of {@code lock}, each unlocked before the next */
    private static List<Long> lockAndUnlock(FencedLock lock, int times) {
        List<Long> fences = new java.util.ArrayList<>();
        for (int i = 0; i < times; i++) {
            lock.lock();
            fences.add(lock.getFence());
            lock.unlock();
        }
        return fences;
    }

    /** A loss while a thread holds the kept entry is a lost hold: reported once, and its unlock says so. */
    @Test
    void aLossWhileAThreadHoldsTheKeptEntryIsReportedOnce() {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        lock.lock();
        lock.unlock();
        lock.lock();
        this.store.entries.get(0).lose("lease expired", core);
        assertThat(this.statistics.statistics().getHoldsLost()).isOne();
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("lease expired");
        assertThat(this.store.entries).hasSize(1);
    }

    /**
     * The store reports a loss after the unlocking thread last looked and before the entry is
     * kept: the unlock reports the lost hold, and the entry does not linger.
     */
    @Test
    void anEntryLostWhileItsUnlockDecidesToKeepItIsNotKept() throws Exception {
        LockCore core = core(LONG_LINGER);
        FencedLock lock = core.obtain("sku", false);
        lock.lock();
        ScriptedEntry entry = this.store.entries.get(0);
        this.store.onNextIsClosed(() -> entry.lose("lease expired", core));
        assertThatThrownBy(lock::unlock).isInstanceOf(LockLostException.class).hasMessageContaining("lease expired");
        assertThat(this.statistics.statistics().getHoldsLost()).isOne();
        assertThat(entry.discarded.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("lost entry discarded").isTrue();
        await().atMost(BOUND).until(() -> core.activeKeys().isEmpty());
    }

    /**
     * A pending timer of a long linger must not stand in for the short one of an entry kept for a
     * local waiter that then gave up: the entry goes back to the store when the window ends.
     */
    @Test
    void anEntryKeptForAWaiterThatGaveUpGoesBackWhenTheWindowEndsDespiteALingerTimer() throws Exception {
        LocalHandoffs handoffs = new LocalHandoffs(this.store, new LocalHandoff(Duration.ofMillis(100),
                Duration.ofMinutes(1)), (state) -> { }, (entry, first, last, reason) -> { });
        KeyState state = new KeyState("sku");
        ScriptedEntry entry = this.store.newEntry("sku", Wait.untimed(false));
        state.unfairGate.lock();
        KeyState.Tenure tenure = handoffs.started(state, entry);
        assertThat(handoffs.keep(state, tenure)).as("lingers, with a timer at the end of the linger").isTrue();
        assertThat(state.kept).isSameAs(tenure);
        assertThat(handoffs.take(state)).as("taken again").isNotNull();
        // A thread queues at the gate, and passes it after this one left without taking the entry.
        CompletableFuture<Boolean> passer = CompletableFuture.supplyAsync(() -> passGate(state));
        await().atMost(BOUND).until(state.unfairGate::hasQueuedThreads);
        assertThat(handoffs.keep(state, tenure)).as("kept for the waiter for one window").isTrue();
        state.unfairGate.unlock();
        assertThat(passer.get(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(entry.released.await(BOUND.toMillis(), TimeUnit.MILLISECONDS))
            .as("released when the window ended, long before the linger").isTrue();
    }

    /** A store fence out of range fails the acquisition, and the entry it got does not stay in the store. */
    @Test
    void anAcquisitionThatFailsAfterTheStoreGaveTheKeyReleasesTheEntry() {
        LockCore core = core(LONG_LINGER);
        this.store.nextFence.set(-1);
        FencedLock lock = core.obtain("sku", false);
        assertThatIllegalStateException().isThrownBy(lock::lock).withMessageContaining("Store fence -1");
        assertThat(this.store.entries.get(0).released.getCount()).as("entry released").isZero();
        assertThat(core.activeKeys()).isEmpty();
        this.store.nextFence.set(100);
        assertThat(lock.tryLock()).as("the gate was left open").isTrue();
        lock.unlock();
    }

    private LockCore core(LocalHandoff localHandoff) {
        LockCore core = new LockCore(this.store, this.statistics, "test-process", localHandoff);
        core.addLossListener(this.losses::add);
        return core;
    }

    private static void meet(CyclicBarrier barrier) {
        try {
            barrier.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (Exception ex) {
            throw new IllegalStateException("The other thread never asked", ex);
        }
    }

    /** @return whether the unlock reported the hold lost */
    private static boolean unlockReportsLoss(FencedLock lock) {
        lock.lock();
        try {
            lock.unlock();
            return false;
        }
        catch (LockLostException ex) {
            return true;
        }
    }

    /**
     * An unfair hold of "sku" whose entry lingers 20 ms and then goes back to the exclusive store,
     * whose release does not return until {@code storeAnswers} opens.
     * @return a fair lock of "sku", once that release is under way
     */
    private FencedLock fairLockWhileTheTimerGivesBack(CountDownLatch storeAnswers) throws InterruptedException {
        this.store.exclusive = true;
        LockCore core = core(new LocalHandoff(Duration.ofMinutes(1), Duration.ofMillis(20)));
        FencedLock unfair = core.obtain("sku", false);
        unfair.lock();
        ScriptedEntry lingering = this.store.entries.get(0);
        CountDownLatch releaseSent = new CountDownLatch(1);
        lingering.onRelease(() -> {
            releaseSent.countDown();
            awaitQuietly(storeAnswers);
        });
        unfair.unlock();
        assertThat(releaseSent.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("linger over, giving back").isTrue();
        return core.obtain("sku", true);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("The test never let the store answer");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean passGate(KeyState state) {
        try {
            if (!state.unfairGate.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
            state.unfairGate.unlock();
            return true;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Every entry gets the key at once; the test decides when the store sees it closed. */
    static final class ScriptedStore extends StubLockStore {

        final List<ScriptedEntry> entries = new CopyOnWriteArrayList<>();

        final AtomicLong nextFence = new AtomicLong(1);

        /** When set, an entry does not get its key while another entry of the key holds it: a try then fails. */
        volatile boolean exclusive;

        /** The bound of each entry's write, in the order of the entries. */
        final List<Wait> attempts = new CopyOnWriteArrayList<>();

        private final AtomicReference<@Nullable Runnable> onNextIsClosed = new AtomicReference<>();

        ScriptedStore() {
            super("scripted", BOUND);
        }

        void onNextIsClosed(Runnable action) {
            this.onNextIsClosed.set(action);
        }

        @Override
        public ScriptedEntry newEntry(String key, Wait attempt) {
            ScriptedEntry entry = new ScriptedEntry(this, key, this.nextFence.getAndIncrement());
            this.entries.add(entry);
            this.attempts.add(attempt);
            return entry;
        }

        @Override
        public boolean isClosed() {
            Runnable action = this.onNextIsClosed.getAndSet(null);
            if (action != null) {
                action.run();
            }
            return false;
        }
    }

    /** Owns its key as soon as it acquires; lost only when a test says so, at the point it chooses. */
    static final class ScriptedEntry implements StoreEntry {

        final CountDownLatch released = new CountDownLatch(1);

        final CountDownLatch discarded = new CountDownLatch(1);

        private final ScriptedStore store;

        private final String key;

        private final long fence;

        private final AtomicReference<@Nullable Runnable> onNextLostReasonRead = new AtomicReference<>();

        private final AtomicReference<@Nullable Runnable> onRelease = new AtomicReference<>();

        private volatile @Nullable String lostReason;

        private volatile boolean holding;

        /** What the store last confirmed; by default, as a store that confirms only by writing. */
        volatile long confirmedAt = NEVER_CONFIRMED;

        /** When set, the next release is not confirmed (the store did not answer in time). */
        volatile boolean failNextRelease;

        ScriptedEntry(ScriptedStore store, String key, long fence) {
            this.store = store;
            this.key = key;
            this.fence = fence;
        }

        void onNextLostReasonRead(Runnable action) {
            this.onNextLostReasonRead.set(action);
        }

        void onRelease(Runnable action) {
            this.onRelease.set(action);
        }

        /** As a store does in its own thread, up to the point just before it reports the loss. */
        void setLostReason(String reason) {
            this.lostReason = reason;
        }

        /** As a store does: the reason first, then the listener. */
        void lose(String reason, HoldLossListener listener) {
            this.lostReason = reason;
            listener.holdLost(this, reason);
        }

        @Override
        public String lockKey() {
            return this.key;
        }

        @Override
        public boolean acquire(Wait wait, Wait attempt) {
            if (this.store.exclusive && this.store.entries.stream()
                .anyMatch((other) -> other != this && other.key.equals(this.key) && other.holding)) {
                return false;
            }
            this.holding = true;
            return true;
        }

        @Override
        public long fence() {
            return this.fence;
        }

        @Override
        public @Nullable String ahead() {
            return null;
        }

        @Override
        public @Nullable String lostReason() {
            Runnable action = this.onNextLostReasonRead.getAndSet(null);
            if (action != null) {
                action.run();
            }
            return this.lostReason;
        }

        @Override
        public boolean isWaiting() {
            return false;
        }

        @Override
        public boolean isHolding() {
            return this.holding;
        }

        @Override
        public boolean release() throws StoreUnavailableException {
            Runnable action = this.onRelease.getAndSet(null);
            if (action != null) {
                action.run();
            }
            this.released.countDown();
            if (this.failNextRelease) {
                this.failNextRelease = false;
                throw new StoreUnavailableException("no answer in time", null);
            }
            this.holding = false;
            return this.lostReason == null;
        }

        @Override
        public long confirmedAt() {
            return this.confirmedAt;
        }

        @Override
        public void discard() {
            this.holding = false;
            this.discarded.countDown();
        }

        private volatile @Nullable Runnable queuedBehind;

        /** @return what the core asked to be told when an entry queues behind this one */
        Runnable queuedBehind() {
            Runnable told = this.queuedBehind;
            assertThat(told).as("the core asked to be told").isNotNull();
            return told;
        }

        @Override
        public boolean whenQueuedBehind(Runnable queuedBehind) {
            this.queuedBehind = queuedBehind;
            return true;
        }
    }
}
