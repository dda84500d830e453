package io.github.distlock.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.CriticalSectionChecker.Report;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * G11: with a 3-member cluster, losing the leader or another member breaks no guarantee, and work
 * resumes once the cluster has a leader.
 */
@FaultInjectionTest
class ClusterFailoverIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.threeMembers();

    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
        etcd.cluster().ensureAllRunning();
        etcd.cluster().awaitLeader(LONG);
    }

    @Test
    void contentionSurvivesLeaderLossAndAMemberRestart() throws Exception {
        EtcdCluster cluster = etcd.cluster();
        List<EtcdLockRegistry> registries = List.of(newRegistry("a"), newRegistry("b"));
        int target = 240;
        Contention contention = new Contention(registries, "failover", 4, target);
        contention.start();

        await().atMost(LONG).until(() -> contention.acquisitions.get() >= target / 4);
        int leader = cluster.leaderIndex();
        cluster.member(leader).kill();
        cluster.awaitLeader(LONG);
        int afterElection = contention.acquisitions.get();
        await().atMost(LONG).until(() -> contention.acquisitions.get() >= afterElection + target / 4);
        cluster.member(leader).restart();
        int follower = (cluster.leaderIndex() + 1) % 3;
        cluster.member(follower).kill();
        int afterFollowerLoss = contention.acquisitions.get();
        await().atMost(LONG).until(() -> contention.acquisitions.get() >= afterFollowerLoss + target / 8);
        cluster.member(follower).restart();

        contention.awaitDone(Duration.ofMinutes(2));
        contention.assertGuaranteesKept("leader killed, then a follower killed and restarted");
        assertThat(contention.lost.get()).as("holds lost to the failover (lease TTL 5 s)").isZero();
    }

    @Test
    void contentionSurvivesAPausedLeader() throws Exception {
        EtcdCluster cluster = etcd.cluster();
        List<EtcdLockRegistry> registries = List.of(newRegistry("a"), newRegistry("b"));
        int target = 120;
        Contention contention = new Contention(registries, "paused", 4, target);
        contention.start();

        await().atMost(LONG).until(() -> contention.acquisitions.get() >= target / 4);
        int leader = cluster.leaderIndex();
        cluster.member(leader).pause();
        try {
            int whilePaused = contention.acquisitions.get();
            // The two live members elect a leader; work resumes while the old one is still frozen.
            await().atMost(LONG).until(() -> contention.acquisitions.get() >= whilePaused + target / 4);
        }
        finally {
            cluster.member(leader).resume();
        }
        contention.awaitDone(Duration.ofMinutes(2));
        contention.assertGuaranteesKept("leader frozen (SIGSTOP) and resumed");
    }

    private EtcdLockRegistry newRegistry(String owner) {
        // gRPC keep-alives as the auto-configuration sets them by default: the client gives up on a
        // frozen member within seconds (jetcd's defaults, 30 s + 10 s, exceed the lease TTL), and
        // 5 s is the most frequent ping etcd accepts by default.
        Client client = Client.builder()
            .endpoints(etcd.clientEndpoints().toArray(String[]::new))
            .keepaliveTime(Duration.ofSeconds(5))
            .keepaliveTimeout(Duration.ofSeconds(3))
            .keepaliveWithoutCalls(true)
            .build();
        this.resources.add(client);
        EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace("/failover/")
            .leaseTtl(Duration.ofSeconds(5))
            .requestTimeout(Duration.ofSeconds(2))
            .ownerIdentity(owner)
            .endpoints(etcd.clientEndpoints())
            .build();
        this.resources.add(registry);
        return registry;
    }

    /**
     * Threads on several registries acquiring one key until {@code target} acquisitions complete,
     * retrying acquisitions that fail while the cluster has no leader, and journaling every hold
     * for the {@link CriticalSectionChecker}.
     */
    private static final class Contention {

        final AtomicInteger acquisitions = new AtomicInteger();

        final AtomicInteger lost = new AtomicInteger();

        final AtomicInteger retries = new AtomicInteger();

        private final AtomicInteger sections = new AtomicInteger();

        private final Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

        private final CriticalSectionChecker checker = new CriticalSectionChecker();

        private final List<Thread> threads = new ArrayList<>();

        private final int target;

        Contention(List<EtcdLockRegistry> registries, String key, int threadCount, int target) {
            this.target = target;
            for (int t = 0; t < threadCount; t++) {
                EtcdLockRegistry registry = registries.get(t % registries.size());
                FencedLock lock = registry.obtain(key, t % 2 == 0);
                String process = "registry-" + (t % registries.size());
                Thread thread = new Thread(() -> run(lock, process), "contender-" + t);
                thread.setDaemon(true);
                this.threads.add(thread);
            }
        }

        void start() {
            this.threads.forEach(Thread::start);
        }

        void awaitDone(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            for (Thread thread : this.threads) {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                assertThat(thread.isAlive()).as("%s still running after %s", thread.getName(), timeout).isFalse();
            }
        }

        /** Fails on any overlap, fence regression or lost iteration, and reports the longest gap. */
        void assertGuaranteesKept(String fault) {
            assertThat(this.unexpected).as("unexpected failures").isEmpty();
            Report report = this.checker.check(this.sections.get()).assertNoViolations();
            assertThat(this.acquisitions.get()).as("completed iterations").isEqualTo(this.target);
            System.out.printf("[failover] %s: %d critical sections, %d retried acquisitions, longest gap "
                    + "without a holder %d ms (%s)%n", fault, report.completed(), this.retries.get(),
                    report.longestGapMillis(), report.longestGapAt());
        }

        private void run(FencedLock lock, String process) {
            String thread = Thread.currentThread().getName();
            while (this.acquisitions.get() < this.target) {
                try {
                    if (!lock.tryLock(20, TimeUnit.SECONDS)) {
                        this.retries.incrementAndGet();
                        continue;
                    }
                }
                catch (LockAcquisitionException ex) {
                    this.retries.incrementAndGet();
                    continue;
                }
                catch (InterruptedException ex) {
                    return;
                }
                catch (RuntimeException ex) {
                    this.unexpected.add(ex);
                    return;
                }
                long fence = lock.getFence();
                try {
                    this.checker.enter(process, thread, fence);
                    if (this.acquisitions.get() < this.target) {
                        this.acquisitions.incrementAndGet();
                    }
                    this.checker.exit(process, thread, fence);
                    this.sections.incrementAndGet();
                }
                finally {
                    try {
                        lock.unlock();
                    }
                    catch (LockLostException ex) {
                        this.lost.incrementAndGet();
                    }
                }
            }
        }
    }
}
