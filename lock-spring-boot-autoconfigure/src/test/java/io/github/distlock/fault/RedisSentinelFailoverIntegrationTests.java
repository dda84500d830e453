package io.github.distlock.fault;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.CriticalSectionChecker.Event;
import io.github.distlock.testsupport.CriticalSectionChecker.Kind;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.RedisServer;
import io.github.distlock.testsupport.TcpProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What Redis cannot promise, shown: a primary, a replica and a Sentinel; three registries (each
 * with its own client, as three processes) contend for one key through the Sentinel; the primary
 * is killed mid-contention and the Sentinel promotes the replica. Replication is asynchronous, so
 * the promoted replica may have missed the last queue changes and two holders may overlap until
 * the older one learns its hold is gone. The test reports what happened (overlaps, holds reported
 * lost, stale writes the fenced resource rejected) and checks what must hold anyway: every holder
 * that overlapped an older one has the larger fence, the resource never accepts a write older than
 * one it accepted, and locking resumes on the new primary.
 */
@FaultInjectionTest
class RedisSentinelFailoverIntegrationTests {

    private static final String MASTER = "distlock-primary";

    private static final Duration TTL = Duration.ofSeconds(3);

    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    @Test
    void primaryKilledDuringContentionFailsOverAndTheFenceStillOrdersTheHolders() throws Exception {
        RedisServer primary = track(RedisServer.start(false));
        RedisServer replica = track(RedisServer.startReplicaOf(primary));
        await().atMost(LONG).until(() -> replica.command("INFO", "replication").contains("master_link_status:up"));
        RedisServer sentinel = track(RedisServer.startSentinel(primary, MASTER, Duration.ofSeconds(1)));
        RedisURI viaSentinel = RedisURI.Builder.sentinel(sentinel.host(), sentinel.port(), MASTER).build();

        CriticalSectionChecker checker = new CriticalSectionChecker();
        InMemoryFencedResource resource = new InMemoryFencedResource();
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger lostAtUnlock = new AtomicInteger();
        AtomicInteger failedAcquisitions = new AtomicInteger();
        List<RedisLockRegistry> registries = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            RedisLockRegistry registry = registry(viaSentinel, "p" + p, TTL);
            registries.add(registry);
            for (int t = 0; t < 2; t++) {
                String process = "p" + p;
                String thread = "t" + t;
                FencedLock lock = registry.obtain("contended", t == 0);
                threads.add(new Thread(() -> contend(lock, process, thread, checker, resource, running, lostAtUnlock,
                        failedAcquisitions), process + "-" + thread));
            }
        }
        threads.forEach(Thread::start);
        await().atMost(LONG).until(() -> completed(checker) >= 50);

        primary.kill();
        long killedAt = System.nanoTime();
        int completedBefore = completed(checker);
        // Sentinel kills the promoted replica's clients (CLIENT KILL TYPE normal): a poll may find its connection reset.
        await().atMost(LONG).ignoreExceptionsInstanceOf(IllegalStateException.class)
            .until(() -> replica.command("INFO", "replication").contains("role:master"));
        long promotedAt = System.nanoTime();
        // Locking resumes on the promoted replica.
        await().atMost(LONG).until(() -> completed(checker) >= completedBefore + 50);
        long resumedAt = System.nanoTime();
        running.set(false);
        for (Thread thread : threads) {
            thread.join(LONG.toMillis());
            assertThat(thread.isAlive()).as(thread.getName() + " ended").isFalse();
        }

        List<Event> events = checker.events();
        int overlaps = 0;
        Event inside = null;
        for (Event event : events) {
            if (event.kind() == Kind.ENTER) {
                if (inside != null) {
                    overlaps++;
                    // The point of the fence: whoever entered while an older holder was inside has the larger fence.
                    assertThat(event.fence()).as("fence of %s, who entered while %s was inside", event, inside)
                        .isGreaterThan(inside.fence());
                }
                inside = event;
            }
            else if (event.kind() == Kind.EXIT && inside != null && inside.holder().equals(event.holder())) {
                inside = null;
            }
        }
        long holdsLost = registries.stream().mapToLong(registry -> registry.getStatistics().getHoldsLost()).sum();
        System.out.printf("[sentinel failover] promoted %d ms after the kill, locking resumed %d ms after it; "
                + "%d sections before the kill, %d in all; overlaps: %d; holds reported lost: %d (unlock threw "
                + "LockLostException %d times); fenced writes rejected as stale: %d; acquisitions that failed "
                + "while Redis was down: %d%n", TimeUnit.NANOSECONDS.toMillis(promotedAt - killedAt),
                TimeUnit.NANOSECONDS.toMillis(resumedAt - killedAt), completedBefore, completed(checker), overlaps,
                holdsLost, lostAtUnlock.get(), resource.rejected.get(), failedAcquisitions.get());
        assertThat(resource.acceptedOutOfOrder.get()).as("writes accepted below an accepted fence").isZero();
    }

    @Test
    void aHoldTheReplicaMissedOverlapsAfterFailoverAndTheFenceRejectsTheStaleHolder() throws Exception {
        RedisServer primary = track(RedisServer.start(false));
        // Replication runs through a proxy, so that the test decides what the replica misses.
        TcpProxy replication = track(TcpProxy.start("http://" + primary.host() + ":" + primary.port()));
        URI proxied = URI.create(replication.endpoint());
        RedisServer replica = track(RedisServer.startReplicaOf(proxied.getHost(), proxied.getPort()));
        await().atMost(LONG).until(() -> replica.command("INFO", "replication").contains("master_link_status:up"));
        RedisServer sentinel = track(RedisServer.startSentinel(primary, MASTER, Duration.ofSeconds(1)));
        RedisURI viaSentinel = RedisURI.Builder.sentinel(sentinel.host(), sentinel.port(), MASTER).build();
        // A TTL longer than the failover: the replica's copy of the fence counter must not expire meanwhile.
        RedisLockRegistry stale = registry(viaSentinel, "stale", Duration.ofSeconds(20));
        RedisLockRegistry next = registry(viaSentinel, "next", Duration.ofSeconds(20));
        InMemoryFencedResource resource = new InMemoryFencedResource();

        // The key was used before: the replica has its fence counter, and an empty queue.
        FencedLock staleLock = stale.obtain("order-7", true);
        staleLock.lock();
        staleLock.unlock();
        await().atMost(LONG).until(() -> replica.command("GET", "failover:{order-7}:f") != null
                && replica.command("EXISTS", "failover:{order-7}:q").equals("0"));
        // Replication lags: the replica never sees the hold taken now.
        replication.stall();
        staleLock.lock();
        long staleFence = staleLock.getFence();
        assertThat(resource.write(staleFence)).isTrue();
        primary.kill();
        replication.reset();
        // Sentinel kills the promoted replica's clients (CLIENT KILL TYPE normal): a poll may find its connection reset.
        await().atMost(LONG).ignoreExceptionsInstanceOf(IllegalStateException.class)
            .until(() -> replica.command("INFO", "replication").contains("role:master"));

        // The promoted replica has no entry for the key: another process gets it while the old holder runs.
        FencedLock nextLock = next.obtain("order-7", true);
        assertThat(nextLock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long nextFence = nextLock.getFence();
        // Its counter lagged too, yet the fence is larger (fences never go below the server's clock).
        assertThat(nextFence).isGreaterThan(staleFence);
        assertThat(resource.write(nextFence)).isTrue();
        // The stale holder's write comes late and is refused; its lock says it is gone.
        assertThat(resource.write(staleFence)).isFalse();
        await().atMost(LONG).pollInSameThread().until(() -> !staleLock.isLockedByCurrentThread());
        // Counted by the thread that noticed the loss, just after it marked the hold.
        await().atMost(LONG).until(() -> stale.getStatistics().getHoldsLost() == 1);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(staleLock::unlock);
        assertThat(nextLock.isLockedByCurrentThread()).isTrue();
        nextLock.unlock();
        System.out.printf("[sentinel failover, lagging replica] stale holder fence %d, next holder fence %d; "
                + "overlap shown, stale write rejected, loss reported%n", staleFence, nextFence);
    }

    private RedisLockRegistry registry(RedisURI uri, String owner, Duration ttl) {
        RedisClient client = RedisClient.create(uri);
        this.resources.add(client::shutdown);
        RedisLockRegistry registry = RedisLockRegistry.builder(client).namespace("failover:").leaseTtl(ttl)
            .requestTimeout(Duration.ofSeconds(2)).ownerIdentity(owner).description("Redis via Sentinel").build();
        this.resources.add(registry);
        return registry;
    }

    private static void contend(FencedLock lock, String process, String thread, CriticalSectionChecker checker,
            InMemoryFencedResource resource, AtomicBoolean running, AtomicInteger lostAtUnlock,
            AtomicInteger failedAcquisitions) {
        while (running.get()) {
            try {
                if (!lock.tryLock(10, TimeUnit.SECONDS)) {
                    continue;
                }
            }
            catch (LockAcquisitionException ex) {
                failedAcquisitions.incrementAndGet();
                continue;
            }
            catch (InterruptedException ex) {
                return;
            }
            long fence = lock.getFence();
            checker.enter(process, thread, fence);
            checker.write(process, thread, fence, resource.write(fence));
            try {
                TimeUnit.MILLISECONDS.sleep(5);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            checker.exit(process, thread, fence);
            try {
                lock.unlock();
            }
            catch (LockLostException ex) {
                lostAtUnlock.incrementAndGet();
            }
        }
    }

    private static int completed(CriticalSectionChecker checker) {
        return (int) checker.events().stream().filter(event -> event.kind() == Kind.EXIT).count();
    }

    private <T extends AutoCloseable> T track(T resource) {
        this.resources.add(resource);
        return resource;
    }

    /** A resource that accepts a write only with a fence above every fence it accepted: what a fenced database row does. */
    private static final class InMemoryFencedResource {

        private final AtomicLong highest = new AtomicLong();

        private final AtomicInteger rejected = new AtomicInteger();

        private final AtomicInteger acceptedOutOfOrder = new AtomicInteger();

        boolean write(long fence) {
            while (true) {
                long current = this.highest.get();
                if (fence <= current) {
                    this.rejected.incrementAndGet();
                    return false;
                }
                if (this.highest.compareAndSet(current, fence)) {
                    return true;
                }
            }
        }
    }
}
