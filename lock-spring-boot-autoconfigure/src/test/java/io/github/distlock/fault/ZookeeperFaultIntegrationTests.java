package io.github.distlock.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static io.github.distlock.testsupport.BoundedCalls.assertAGiveUpReturnsAtItsTimeoutWhileFrozen;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * ZooKeeper failing under the locks: a 3-member ensemble losing its leader and a member during
 * contention, the holder's connection cut for less and for more than the session timeout, and
 * ZooKeeper missing at start. Nothing overlaps, fences keep increasing, holds ZooKeeper may have
 * expired are reported lost, calls end within their bounds, and locking resumes.
 */
@FaultInjectionTest
class ZookeeperFaultIntegrationTests {

    private static final int SESSION_TIMEOUT_MILLIS = 4_000;

    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    private <T extends AutoCloseable> T track(T resource) {
        this.resources.add(resource);
        return resource;
    }

    private ZookeeperLockRegistry registry(String connectString, String owner, boolean awaitConnection) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, SESSION_TIMEOUT_MILLIS, 2_000,
                new ExponentialBackoffRetry(100, 3));
        client.start();
        track(client::close);
        if (awaitConnection) {
            try {
                assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        }
        return track(ZookeeperLockRegistry.builder(client).namespace("/fault").ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(2)).description("ZooKeeper at " + connectString).build());
    }

    @Test
    void contentionSurvivesLeaderLossAndAMemberRestartWithoutOverlap() throws Exception {
        ZooKeeperEnsemble zookeeper = track(ZooKeeperEnsemble.threeMembers());
        CriticalSectionChecker checker = new CriticalSectionChecker();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            ZookeeperLockRegistry registry = registry(zookeeper.connectString(), "p" + p, true);
            String process = "p" + p;
            FencedLock lock = registry.obtain("contended", p % 2 == 0);
            threads.add(new Thread(() -> contend(lock, process, checker, running), process));
        }
        threads.forEach(Thread::start);
        await().atMost(LONG).until(() -> completed(checker) >= 30);

        int leader = zookeeper.leaderIndex();
        zookeeper.member(leader).kill();
        int before = completed(checker);
        await().atMost(LONG).until(() -> completed(checker) >= before + 30);
        int follower = (zookeeper.leaderIndex() + 1) % 3 == leader ? (zookeeper.leaderIndex() + 2) % 3
                : (zookeeper.leaderIndex() + 1) % 3;
        zookeeper.member(follower).kill();
        zookeeper.member(leader).restart();
        int afterRestart = completed(checker);
        await().atMost(LONG).until(() -> completed(checker) >= afterRestart + 30);
        running.set(false);
        for (Thread thread : threads) {
            thread.join(LONG.toMillis());
            assertThat(thread.isAlive()).as(thread.getName() + " ended").isFalse();
        }
        CriticalSectionChecker.Report report = checker.check(completed(checker));
        System.out.printf("[zookeeper failover] %d sections, longest gap without a holder %d ms (%s)%n",
                report.completed(), report.longestGapMillis(), report.longestGapAt());
        report.assertNoViolations();
    }

    @Test
    void aTimedWaitThatEndsWhileItsServerIsFrozenReturnsAtItsTimeout() throws Exception {
        ZooKeeperEnsemble zookeeper = track(ZooKeeperEnsemble.threeMembers());
        // The waiter talks to member 0 only, which freezes; the holder to member 1, which goes on.
        ZookeeperLockRegistry waiter = registry(zookeeper.member(0).address(), "waiter", true);
        ZookeeperLockRegistry holder = registry(zookeeper.member(1).address(), "holder", true);
        FencedLock held = holder.obtain("late", true);
        held.lock();
        assertAGiveUpReturnsAtItsTimeoutWhileFrozen(waiter.obtain("late", true),
                () -> waiter.getWaitingThreadCount() == 1, () -> holder.describeLock("late", 10).waiters().isEmpty(),
                () -> zookeeper.member(0).pause(), () -> zookeeper.member(0).resume());
        held.unlock();
    }

    @Test
    void aCutShorterThanTheSessionTimeoutKeepsTheHoldALongerOneLosesItAndANewSessionServes() throws Exception {
        ZooKeeperEnsemble zookeeper = track(ZooKeeperEnsemble.threeMembers());
        // The holder talks to member 0 only, the other process to member 1: freezing member 0 cuts
        // the holder off while the ensemble (members 1 and 2) goes on.
        ZookeeperLockRegistry holder = registry(zookeeper.member(0).address(), "holder", true);
        ZookeeperLockRegistry other = registry(zookeeper.member(1).address(), "other", true);
        FencedLock held = holder.obtain("cut", true);
        held.lock();
        long fence = held.getFence();

        // Cut off for an eighth of the session timeout (a sync goes out every eighth, and the hold
        // lasts half the timeout after the last one answered): the hold is still there a whole
        // session timeout after the cut ended.
        zookeeper.member(0).pause();
        TimeUnit.MILLISECONDS.sleep(SESSION_TIMEOUT_MILLIS / 8);
        zookeeper.member(0).resume();
        long resumedAt = System.nanoTime();
        await().atMost(LONG).until(() -> System.nanoTime() - resumedAt > TimeUnit.MILLISECONDS.toNanos(
                SESSION_TIMEOUT_MILLIS + 1_000));
        assertThat(held.isLockedByCurrentThread()).isTrue();
        assertThat(held.getFence()).isEqualTo(fence);
        assertThat(holder.getStatistics().getHoldsLost()).isZero();

        // Cut off for longer than the session timeout: the ensemble expires the session, another
        // process takes over, and the holder knows no later than half a session timeout after the
        // cut (plus a sync interval and slack: the bound asserted is the whole timeout + 1 s).
        long cutAt = System.nanoTime();
        zookeeper.member(0).pause();
        try {
            CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(other.obtain("cut", true), LONG);
            await().atMost(LONG).pollInSameThread().until(() -> !held.isLockedByCurrentThread());
            Duration lostAfter = Duration.ofNanos(System.nanoTime() - cutAt);
            long nextFence = next.get(LONG.toSeconds(), TimeUnit.SECONDS);
            System.out.printf("[zookeeper cut] hold reported lost %d ms after the cut (session timeout %d ms); "
                    + "another process entered meanwhile%n", lostAfter.toMillis(), SESSION_TIMEOUT_MILLIS);
            assertThat(lostAfter).isLessThan(Duration.ofMillis(SESSION_TIMEOUT_MILLIS + 1_000));
            assertThat(nextFence).isGreaterThan(fence);
        }
        finally {
            zookeeper.member(0).resume();
        }
        assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock);
        // The holder's client gets a new session, which serves later acquisitions.
        FencedLock again = holder.obtain("cut", true);
        assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(again.getFence()).isGreaterThan(fence);
        again.unlock();
    }

    @Test
    void aHolderOnAFollowerCutOffFromTheLeaderKnowsItsHoldLostBeforeAnotherProcessTakesIt() throws Exception {
        ZooKeeperEnsemble zookeeper = track(ZooKeeperEnsemble.threeMembersWithCuttableQuorumLinks());
        int leader = zookeeper.leaderIndex();
        assertThat(leader).as("the leader").isNotNegative();
        int follower = (leader + 1) % 3;
        // The holder talks to a follower only, the other process to the other follower. Cut off from
        // the leader, the holder's follower still answers its reads and pings for syncLimit ticks (5 s
        // here), while the leader, told of the session by nobody, expires it after the 4 s timeout.
        ZookeeperLockRegistry holder = registry(zookeeper.member(follower).address(), "holder", true);
        ZookeeperLockRegistry other = registry(zookeeper.member((leader + 2) % 3).address(), "other", true);
        FencedLock held = holder.obtain("partitioned", true);
        held.lock();
        long fence = held.getFence();
        FencedLock taken = other.obtain("partitioned", true);

        long cutAt = System.nanoTime();
        zookeeper.cutQuorumLink(follower, leader);
        // The cut must be between the holder's follower and the leader of the moment.
        assertThat(zookeeper.member(leader).mode()).as("the leader's mode after the cut").isEqualTo("leader");
        CompletableFuture<long[]> takeover = CompletableFuture.supplyAsync(() -> {
            try {
                assertThat(taken.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
                try {
                    // What the holder's registry knew when the other process entered.
                    return new long[] { System.nanoTime() - cutAt, holder.getStatistics().getHoldsLost(),
                            taken.getFence() };
                }
                finally {
                    taken.unlock();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
        });
        long[] entered = takeover.get(LONG.toSeconds(), TimeUnit.SECONDS);
        System.out.printf("[zookeeper partition] the other process entered %d ms after the cut; holds the cut-off "
                + "holder had reported lost by then: %d%n", TimeUnit.NANOSECONDS.toMillis(entered[0]), entered[1]);
        assertThat(entered[1]).as("holds lost by the cut-off holder before another process entered").isEqualTo(1);
        assertThat(entered[2]).isGreaterThan(fence);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock);
    }

    @Test
    void zookeeperMissingAtStartFailsWithinTheBoundAndLockingWorksOnceItServes() throws Exception {
        ZooKeeperEnsemble zookeeper = track(ZooKeeperEnsemble.standalone());
        zookeeper.member(0).kill();
        ZookeeperLockRegistry cold = registry(zookeeper.connectString(), "cold", false);
        FencedLock lock = cold.obtain("cold", true);
        long start = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class)
            .isThrownBy(() -> lock.tryLock(500, TimeUnit.MILLISECONDS))
            .withMessageContaining("ZooKeeper at " + zookeeper.connectString());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));

        zookeeper.member(0).restart();
        await().atMost(LONG).pollInSameThread().ignoreExceptions().until(() -> lock.tryLock(1, TimeUnit.SECONDS));
        assertThat(lock.getFence()).isPositive();
        lock.unlock();
    }

    private static void contend(FencedLock lock, String process, CriticalSectionChecker checker, AtomicBoolean running) {
        while (running.get()) {
            try {
                if (!lock.tryLock(20, TimeUnit.SECONDS)) {
                    continue;
                }
            }
            catch (LockAcquisitionException ex) {
                continue;
            }
            catch (InterruptedException ex) {
                return;
            }
            long fence = lock.getFence();
            checker.enter(process, "main", fence);
            try {
                TimeUnit.MILLISECONDS.sleep(2);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            checker.exit(process, "main", fence);
            try {
                lock.unlock();
            }
            catch (LockLostException ex) {
                // Reported; the checker decides whether anything overlapped.
            }
        }
    }

    private static int completed(CriticalSectionChecker checker) {
        return (int) checker.events().stream().filter(event -> event.kind() == CriticalSectionChecker.Kind.EXIT).count();
    }
}
