package io.github.distlock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockSnapshot;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leader election with Spring Integration's {@code LockRegistryLeaderInitiator} on the adapter over
 * a registry of the store the subclass names, in three processes ({@link LeaderCandidateMain}).
 *
 * <p>The initiator's settings: heartbeat 200 ms (how often a leader re-acquires its lock, reentrantly,
 * to check that it still holds it; a follower's {@code tryLock} waits this long per attempt) and
 * busy-wait 50 ms (the pause after losing leadership or a failed attempt). Lease TTL 2 s: the etcd
 * lease TTL, the Redis lease TTL, the ZooKeeper session timeout.
 *
 * <p>What is guaranteed, and asserted: one leader at a time while every process runs; after a
 * leader's crash another is granted within the store's {@linkplain #livenessBound() liveness bound}
 * + 1 s + heartbeat + busy-wait; a frozen leader cannot be told anything while frozen, so another
 * process is granted while it still believes it leads, and it is told (revoked callback) within a
 * heartbeat of running again. In that window the fence tells the two apart: the new leader's fence
 * is greater, and every write the stale leader makes after the new leader's grant is refused by the
 * fenced resource. A leader that yields hands over to the waiting candidate in well under a second:
 * its unlock lets the next candidate in, no lease has to end.
 *
 * <p>Event times are {@code System.nanoTime()} of each process: on Linux the monotonic clock, which
 * every process of the machine shares, so the test compares them with its own.
 */
@FaultInjectionTest
public abstract class AbstractLeaderElectionTests {

    /** The lease TTL of every candidate's registry (for ZooKeeper, its session timeout). */
    protected static final long TTL_SECONDS = 2;

    private static final long HEARTBEAT_MILLIS = 200;

    /**
     * The bound of what happens at once, with slack for a loaded machine: below two thirds of the
     * TTL (1.33 s), the earliest an expiry could show instead.
     */
    private static final Duration PROMPTLY = Duration.ofMillis(1250);

    private static final long BUSY_WAIT_MILLIS = 50;

    private static final Duration LONG = Duration.ofSeconds(60);

    /** How many times the leader may yield before another candidate must have been granted. */
    private static final int MAX_YIELDS = 5;

    private final List<JvmProcess> candidates = new ArrayList<>();

    private TestStore store;

    /** @return a new view of the store under test, with its own client; the caller closes it */
    protected abstract TestStore openStore();

    /**
     * How long the store may keep the holds of a crashed or frozen process after its last renewal: by
     * default the lease TTL.
     * @return the store's liveness bound for a {@value #TTL_SECONDS} s TTL
     */
    protected Duration livenessBound() {
        return Duration.ofSeconds(TTL_SECONDS);
    }

    /** The bound of a handover after a crash: the lease ends, the next candidate's attempt notices. */
    private Duration handoverBound() {
        return livenessBound().plusSeconds(1).plusMillis(HEARTBEAT_MILLIS + BUSY_WAIT_MILLIS);
    }

    @AfterEach
    void tearDown() {
        this.candidates.forEach(JvmProcess::close);
        if (this.store != null) {
            this.store.close();
        }
    }

    @Test
    void threeProcessesElectOneLeaderAndHandOverAfterACrashAndAPause() {
        this.store = openStore();
        String storeName = this.store.spec().substring(0, this.store.spec().indexOf('='));
        String id = UUID.randomUUID().toString();
        String namespace = this.store.namespace("leader-election-" + id);
        for (int i = 1; i <= 3; i++) {
            this.candidates.add(JvmProcess.builder(LeaderCandidateMain.class)
                .args(this.store.spec(), namespace, "leader", Long.toString(TTL_SECONDS), "candidate-" + i,
                        "leader-resource-" + id, Long.toString(HEARTBEAT_MILLIS), Long.toString(BUSY_WAIT_MILLIS))
                .start());
        }
        for (JvmProcess candidate : this.candidates) {
            candidate.awaitLine((line) -> line.startsWith("READY "), LONG);
        }

        // One leader, that keeps leading and working while the others try; the store shows it as the holder.
        await().atMost(LONG).until(() -> leaders().size() == 1);
        JvmProcess first = leaders().get(0);
        await().atMost(LONG).until(() -> acceptedWrites(first).size() >= 5);
        assertThat(leaders()).containsExactly(first);
        InspectableLockRegistry observer = this.store.registry(namespace, Duration.ofSeconds(TTL_SECONDS), "observer");
        LockSnapshot.Entry holder = observer.describeLock("leader", 10).holder();
        assertThat(holder).isNotNull();
        assertThat(holder.owner()).isEqualTo(name(first));
        long firstFence = grants(first).get(0).fence;

        // SIGKILL: another one leads within the lease TTL + 1 s + the initiator's own intervals.
        first.kill();
        long killedAt = System.nanoTime();
        await().atMost(LONG).until(() -> others(first).stream().anyMatch((p) -> !grants(p).isEmpty()));
        JvmProcess second = others(first).stream().filter((p) -> !grants(p).isEmpty()).findFirst().orElseThrow();
        Event secondGrant = grants(second).get(0);
        Duration crashHandover = Duration.ofNanos(secondGrant.nanos - killedAt);
        System.out.printf("[leader election, %s] crash: %s granted %d ms after the leader was killed (TTL %d s)%n",
                storeName, second, crashHandover.toMillis(), TTL_SECONDS);
        assertThat(crashHandover).isPositive().isLessThan(handoverBound());
        assertThat(secondGrant.fence).isGreaterThan(firstFence);
        await().atMost(LONG).until(() -> acceptedWrites(second).size() >= 5);
        JvmProcess third = others(first).stream().filter((p) -> p != second).findFirst().orElseThrow();
        assertThat(grants(third)).as("the third candidate while the second leads").isEmpty();

        // SIGSTOP: the frozen leader's lease ends, the third candidate is granted while it is frozen.
        second.pause();
        long pausedAt = System.nanoTime();
        await().atMost(LONG).until(() -> !grants(third).isEmpty());
        Event thirdGrant = grants(third).get(0);
        Duration pauseHandover = Duration.ofNanos(thirdGrant.nanos - pausedAt);
        System.out.printf("[leader election, %s] pause: %s granted %d ms after the leader was frozen (TTL %d s)%n",
                storeName, third, pauseHandover.toMillis(), TTL_SECONDS);
        // Not before the frozen leader's lease could have ended: its last renewal was at most a third
        // of the TTL before the pause.
        assertThat(pauseHandover).isGreaterThan(Duration.ofSeconds(1)).isLessThan(handoverBound());
        assertThat(thirdGrant.fence).isGreaterThan(secondGrant.fence);
        await().atMost(LONG).until(() -> !acceptedWrites(third).isEmpty());
        assertThat(revocations(second)).as("a frozen process prints nothing").isEmpty();

        // SIGCONT: the stale leader learns on its next heartbeat that it lost leadership.
        long resumedAt = System.nanoTime();
        second.resume();
        await().atMost(LONG).until(() -> !revocations(second).isEmpty());
        Event secondRevoked = revocations(second).get(0);
        Duration toldAfter = Duration.ofNanos(secondRevoked.nanos - resumedAt);
        System.out.printf("[leader election, %s] pause: %s told it lost leadership %d ms after it resumed%n",
                storeName, second, toldAfter.toMillis());
        // A JVM resumed from SIGSTOP first catches up on its timers and threads: slack for a loaded machine,
        // still below one TTL, so being told on a heartbeat stays apart from being told by an expiry.
        assertThat(toldAfter).isLessThan(PROMPTLY);
        // It could not be told before the new leader was granted, it was frozen: the fences tell them apart.
        assertThat(secondRevoked.nanos).isGreaterThan(thirdGrant.nanos);
        List<Event> staleWrites = writes(second).stream().filter((w) -> w.nanos > thirdGrant.nanos).toList();
        System.out.printf("[leader election, %s] pause: %d write(s) of the stale leader between its resume and"
                + " its revoke, all refused%n", storeName, staleWrites.size());
        assertThat(staleWrites).allSatisfy((w) -> {
            assertThat(w.accepted).as("stale write %s", w.line).isFalse();
            assertThat(w.storedFence).isGreaterThanOrEqualTo(thirdGrant.fence);
        });

        // The stale leader competes again, and waits in the queue, once it has a new session: a ZooKeeper
        // client first has to reconnect, learn that its session expired and open a new one. The yield below
        // hands leadership to a waiting candidate: with none, it would go back to the yielder.
        String secondName = name(second);
        await().atMost(LONG).until(() -> observer.describeLock("leader", 10).waiters().stream()
            .anyMatch((waiter) -> waiter.owner().equals(secondName)));
        System.out.printf("[leader election, %s] pause: %s seen waiting in the queue again %d ms after it resumed%n",
                storeName, second, Duration.ofNanos(System.nanoTime() - resumedAt).toMillis());

        // Leadership stays with the third candidate while the stale one keeps trying.
        int writesAtRevoke = acceptedWrites(third).size();
        await().atMost(LONG).until(() -> acceptedWrites(third).size() >= writesAtRevoke + 10);
        assertThat(grants(second)).hasSize(1);
        assertThat(revocations(third)).isEmpty();

        // Yield: the leader unlocks, and the candidate waiting in the queue is granted at once, not after a TTL.
        // A follower's tryLock ends every heartbeat and starts again; one that ends just as the leader unlocks
        // can leave the lock to the yielder, which competes again after the busy-wait. On etcd that happened
        // in 3 of 140 yields of an in-process trial: a tryLock woken by the release within a round trip of its
        // deadline fails with LockAcquisitionException ("etcd is unavailable") instead of returning false, and
        // the initiator then pauses for the busy-wait as the yielder does. So the leader yields again (it is
        // granted again first) until the follower is granted.
        Map<Event, Event> lateRevokes = new HashMap<>(Map.of(secondRevoked, thirdGrant));
        Event regranted = null;
        int yields = 0;
        while (regranted == null) {
            assertThat(yields).as("yields that went back to the yielder").isLessThan(MAX_YIELDS);
            yields++;
            int secondGrants = grants(second).size();
            int thirdGrants = grants(third).size();
            int thirdRevocations = revocations(third).size();
            long yieldedAt = System.nanoTime();
            third.request("YIELD", (line) -> line.startsWith("YIELDING "), LONG);
            await().atMost(LONG)
                .until(() -> grants(second).size() > secondGrants || grants(third).size() > thirdGrants);
            await().atMost(LONG).until(() -> revocations(third).size() > thirdRevocations);
            Event thirdRevoked = revocations(third).get(thirdRevocations);
            if (grants(third).size() > thirdGrants) {
                // Back to the yielder: it was revoked before it competed again.
                assertThat(thirdRevoked.nanos).isLessThan(grants(third).get(thirdGrants).nanos);
                System.out.printf("[leader election, %s] yield: %s granted again, no other candidate was first%n",
                        storeName, third);
                await().atMost(LONG).until(() -> observer.describeLock("leader", 10).waiters().stream()
                    .anyMatch((waiter) -> waiter.owner().equals(secondName)));
                continue;
            }
            Event granted = grants(second).get(secondGrants);
            Duration yieldHandover = Duration.ofNanos(granted.nanos - yieldedAt);
            System.out.printf("[leader election, %s] yield: %s granted %d ms after the leader yielded (yield %d)%n",
                    storeName, second, yieldHandover.toMillis(), yields);
            // Below two thirds of a TTL, the earliest a grant could follow an expiry of the yielder's entry
            // instead of its release; slack above the usual tens of ms for a loaded machine with three JVMs.
            assertThat(yieldHandover).isLessThan(PROMPTLY);
            assertThat(granted.fence).isGreaterThan(grants(third).get(thirdGrants - 1).fence);
            // The initiator unlocks before it calls onRevoked: the yielder may print its revoke just after the grant.
            assertThat(Duration.ofNanos(thirdRevoked.nanos - granted.nanos)).isLessThan(PROMPTLY);
            lateRevokes.put(thirdRevoked, granted);
            regranted = granted;
        }
        long regrantedFence = regranted.fence;
        await().atMost(LONG).until(() -> acceptedWrites(second).stream().anyMatch((w) -> w.fence == regrantedFence));

        assertOneLeaderAtATime(first, killedAt, lateRevokes, 3 + yields);
        assertAcceptedFencesNeverDecrease();
    }

    /**
     * Leadership intervals, from grant to revoke (or to the kill), do not overlap, except where a
     * revoke was known to come after the next grant: the frozen leader's, and the yielder's (it
     * unlocked before it was revoked); those intervals are cut at the next grant.
     */
    private void assertOneLeaderAtATime(JvmProcess killed, long killedAt, Map<Event, Event> lateRevokes,
            int leaderships) {
        List<long[]> intervals = new ArrayList<>();
        for (JvmProcess candidate : this.candidates) {
            List<Event> grants = grants(candidate);
            List<Event> revocations = revocations(candidate);
            for (int i = 0; i < grants.size(); i++) {
                long end = (i < revocations.size()) ? revocations.get(i).nanos
                        : (candidate == killed) ? killedAt : Long.MAX_VALUE;
                Event nextGrant = (i < revocations.size()) ? lateRevokes.get(revocations.get(i)) : null;
                if (nextGrant != null) {
                    end = Math.min(end, nextGrant.nanos);
                }
                intervals.add(new long[] { grants.get(i).nanos, end });
            }
        }
        intervals.sort(Comparator.comparingLong((long[] interval) -> interval[0]));
        for (int i = 1; i < intervals.size(); i++) {
            assertThat(intervals.get(i)[0]).as("grant %d starts after leadership %d ended", i, i - 1)
                .isGreaterThanOrEqualTo(intervals.get(i - 1)[1]);
        }
        assertThat(intervals).hasSize(leaderships);
    }

    /** The fenced resource accepted writes in fence order, across all processes. */
    private void assertAcceptedFencesNeverDecrease() {
        List<Event> accepted = new ArrayList<>();
        this.candidates.forEach((candidate) -> accepted.addAll(acceptedWrites(candidate)));
        accepted.sort(Comparator.comparingLong((Event event) -> event.nanos));
        for (int i = 1; i < accepted.size(); i++) {
            assertThat(accepted.get(i).fence).isGreaterThanOrEqualTo(accepted.get(i - 1).fence);
        }
    }

    private List<JvmProcess> leaders() {
        return this.candidates.stream().filter((p) -> grants(p).size() > revocations(p).size() && p.isAlive()).toList();
    }

    /** @return the candidate's name, which is also its registry's owner identity */
    private String name(JvmProcess candidate) {
        return "candidate-" + (this.candidates.indexOf(candidate) + 1);
    }

    private List<JvmProcess> others(JvmProcess one) {
        return this.candidates.stream().filter((p) -> p != one).toList();
    }

    private static List<Event> grants(JvmProcess candidate) {
        return events(candidate, "GRANTED ");
    }

    private static List<Event> revocations(JvmProcess candidate) {
        return events(candidate, "REVOKED ");
    }

    private static List<Event> writes(JvmProcess candidate) {
        return events(candidate, "WRITE ");
    }

    private static List<Event> acceptedWrites(JvmProcess candidate) {
        return writes(candidate).stream().filter((w) -> w.accepted).toList();
    }

    private static List<Event> events(JvmProcess candidate, String prefix) {
        return candidate.lines().stream().filter((line) -> line.startsWith(prefix)).map(Event::parse).toList();
    }

    /** One line of a candidate: {@code GRANTED name fence nanos}, {@code REVOKED name nanos} or a write. */
    private record Event(String line, long nanos, long fence, boolean accepted, long storedFence) {

        static Event parse(String line) {
            String[] words = line.split(" ");
            long nanos = Long.parseLong(words[words.length - 1]);
            return switch (words[0]) {
                case "GRANTED" -> new Event(line, nanos, Long.parseLong(words[2]), false, 0);
                case "REVOKED" -> new Event(line, nanos, 0, false, 0);
                default -> new Event(line, nanos, Long.parseLong(words[3]), words[1].equals("ACCEPTED"),
                        Long.parseLong(words[4]));
            };
        }
    }

    static {
        // Child JVMs of three candidates and etcd on a small machine: keep polling cheap.
        org.awaitility.Awaitility.setDefaultPollInterval(20, TimeUnit.MILLISECONDS);
    }
}
