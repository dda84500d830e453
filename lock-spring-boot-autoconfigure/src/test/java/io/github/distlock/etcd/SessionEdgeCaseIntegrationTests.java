package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.core.Fences;
import io.github.distlock.core.LockCore;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.LostHolds;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

/**
 * The session lease at its edges, against a real etcd: a TTL below etcd's minimum, a grant slower
 * than the TTL, a put refused because the lease is gone, keep-alives during a stall, a
 * maintenance thread blocked inside jetcd, and a session thread that is late to end the session.
 */
@FaultInjectionTest
class SessionEdgeCaseIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> resources = new ArrayList<>();

    private String namespace;

    private TcpProxy proxy;

    @BeforeEach
    void setUp() {
        this.namespace = "/session-edge-" + UUID.randomUUID() + "/";
        this.proxy = track(TcpProxy.start(etcd.clientEndpoints().get(0)));
    }

    @AfterEach
    void tearDown() throws Exception {
        this.proxy.delay(Duration.ZERO);
        this.proxy.restore();
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    @Test
    void ttlBelowEtcdsMinimumRunsOnTheGrantedTtlAndSaysSoOnce() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(SessionKeeper.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        try {
            // etcd's minimum TTL is 1.5 election timeouts: 2 s for the test cluster's 1 s (etcd's default too).
            EtcdLockRegistry registry = registry(track(etcd.newClient()), Duration.ofSeconds(1), Duration.ofSeconds(2));
            assertThat(registry.getGrantedLeaseTtl()).isNull();
            for (int i = 0; i < 3; i++) {
                FencedLock lock = registry.obtain("short-ttl");
                lock.lock();
                lock.unlock();
            }
            assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(1));
            assertThat(registry.getGrantedLeaseTtl()).isEqualTo(Duration.ofSeconds(2));
            // Renewed on the granted TTL's schedule, not lost on the requested one.
            await().during(Duration.ofSeconds(5)).atMost(LONG).until(registry::isSessionAlive);
            assertThat(registry.getStatistics().getSessionsLost()).isZero();
            assertThat(events.list).filteredOn(event -> event.getLevel() == Level.WARN)
                .singleElement()
                .satisfies(event -> assertThat(event.getFormattedMessage())
                    .contains("TTL of 2s instead of the configured 1s")
                    .contains("a crashed holder blocks others for up to 2s"));
        }
        finally {
            logger.detachAppender(events);
        }
    }

    @Test
    void untimedLockGivesUpAfterTheRequestTimeoutWhenEveryGrantIsSlowerThanTheTtl() throws Exception {
        // A request timeout long enough for every call to get its answer: only the TTL is too short.
        EtcdLockRegistry registry = registry(proxiedClient(), Duration.ofSeconds(2), Duration.ofSeconds(12));
        registry.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
        // Round trips of at least 3 s from now on: every keep-alive and grant answers after the 2 s TTL.
        this.proxy.delay(Duration.ofMillis(1500));
        await().atMost(LONG).until(() -> !registry.isSessionAlive());
        FencedLock lock = registry.obtain("slow-grant");
        long start = System.nanoTime();
        LockAcquisitionException failure = assertTimeoutPreemptively(Duration.ofSeconds(90),
                () -> assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(lock::lock).actual());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(failure).hasMessageContaining("lease grant");
        // One request timeout of failures plus the attempt in flight when it ran out.
        assertThat(took).isLessThan(Duration.ofSeconds(45));
        this.proxy.delay(Duration.ZERO);
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        lock.unlock();
    }

    @Test
    void putRefusedBecauseTheLeaseIsGoneStartsANewSessionAtOnce() throws Exception {
        // TTL 30 s: the next keep-alive, which would notice the revoke, is up to 10 s away.
        EtcdLockRegistry registry = registry(track(etcd.newClient()), Duration.ofSeconds(30), Duration.ofSeconds(2));
        FencedLock warmUp = registry.obtain("revoked-lease");
        warmUp.lock();
        warmUp.unlock();
        await().atMost(LONG).pollInterval(Duration.ofMillis(10))
            .until(() -> registry.getSessionRenewalAge().compareTo(Duration.ofMillis(500)) < 0);
        try (Client raw = etcd.newClient()) {
            raw.getLeaseClient().revoke(registry.liveLeaseId()).get(10, TimeUnit.SECONDS);
        }
        long start = System.nanoTime();
        FencedLock lock = registry.obtain("revoked-lease");
        assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            assertThat(registry.getStatistics().getFailed()).isZero();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void keepAliveStreamsEndWhenTheirAttemptGivesUp() throws Exception {
        // No gRPC keep-alive pings, so that only the registry can end a stalled call. TTL 12 s:
        // keep-alives every 4 s, each attempt given up after the 2 s request timeout.
        Client client = track(Client.builder().endpoints(this.proxy.endpoint()).build());
        EtcdLockRegistry registry = registry(client, Duration.ofSeconds(12), Duration.ofSeconds(2));
        FencedLock lock = registry.obtain("stalled-keep-alives");
        lock.lock();
        try {
            long errorsBefore = registry.getStatistics().getBackendErrors();
            this.proxy.stall();
            int mostOpen = 0;
            long deadline = System.nanoTime() + LONG.toNanos();
            while (registry.getStatistics().getBackendErrors() < errorsBefore + 3 && System.nanoTime() < deadline) {
                mostOpen = Math.max(mostOpen, registry.openKeepAliveCalls());
                Thread.sleep(20);
            }
            assertThat(registry.getStatistics().getBackendErrors()).as("failed keep-alives")
                .isGreaterThanOrEqualTo(errorsBefore + 3);
            assertThat(mostOpen).as("keep-alive calls open at once during the stall").isLessThanOrEqualTo(1);
            this.proxy.restore();
            await().atMost(LONG).until(() -> registry.getSessionRenewalAge().compareTo(Duration.ofSeconds(4)) < 0);
            assertThat(registry.isSessionAlive()).isTrue();
            assertThat(lock.isLockedByCurrentThread()).isTrue();
        }
        finally {
            this.proxy.restore();
            lock.unlock();
        }
    }

    @Test
    void keepAlivesGoOnWhileTheMaintenanceThreadIsBlockedInsideJetcd() throws Exception {
        Client client = track(etcd.newClient());
        EtcdLockRegistry registry = registry(client, Duration.ofSeconds(2), Duration.ofSeconds(2));
        FencedLock lock = registry.obtain("blocked-maintenance");
        lock.lock();
        CountDownLatch release = new CountDownLatch(1);
        try {
            // An application watch on the same client whose listener blocks when closed: jetcd calls
            // it while holding the watch client's lock, which every new watch needs too.
            Watch.Watcher appWatch = client.getWatchClient()
                .watch(ByteSequence.from("/app/", StandardCharsets.UTF_8), WatchOption.DEFAULT, new Watch.Listener() {

                    @Override
                    public void onNext(WatchResponse response) {
                    }

                    @Override
                    public void onError(Throwable throwable) {
                    }

                    @Override
                    public void onCompleted() {
                        awaitQuietly(release);
                    }
                });
            Thread closer = new Thread(appWatch::close, "app-watch-closer");
            closer.setDaemon(true);
            closer.start();
            CountDownLatch blocked = new CountDownLatch(1);
            registry.runOnMaintenanceThread(() -> {
                blocked.countDown();
                // What a watch reopen does: needs the lock the application's listener holds.
                client.getWatchClient().watch(ByteSequence.from("/other/", StandardCharsets.UTF_8), response -> {
                }).close();
            });
            assertThat(blocked.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            // Three TTLs: without keep-alives the session would have been lost after one.
            await().during(Duration.ofSeconds(6)).atMost(LONG)
                .until(() -> registry.isSessionAlive() && registry.getHeldLockCount() == 1);
            assertThat(lock.isLockedByCurrentThread()).isTrue();
        }
        finally {
            release.countDown();
            lock.unlock();
        }
    }

    @Test
    void holderWhoseKeyIsDeletedDuringAWatchGapLearnsItOnceEtcdIsBack() throws Exception {
        Client client = track(Client.builder().endpoints(this.proxy.endpoint()).build());
        EtcdLockRegistry registry = registry(client, Duration.ofSeconds(30), Duration.ofSeconds(2));
        FencedLock lock = registry.obtain("watch-gap", true);
        lock.lock();
        try (Client raw = etcd.newClient()) {
            this.proxy.reset();
            // Deleted and compacted while the registry is cut off: the resumed watch cannot deliver it.
            ByteSequence root = registry.keyspace().root("watch-gap");
            long revision = raw.getKVClient()
                .delete(root, io.etcd.jetcd.options.DeleteOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS).getHeader().getRevision();
            raw.getKVClient().compact(revision).get(10, TimeUnit.SECONDS);
            // Longer than a verification attempt, so that the first ones fail and are retried.
            await().pollDelay(Duration.ofSeconds(3)).atMost(LONG).until(() -> true);
            this.proxy.restore();
            long restoredAt = System.nanoTime();
            await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(20))
                .until(() -> !lock.isLockedByCurrentThread());
            // Well within the 30 s TTL: the holder checked its key, the lease did not end it.
            assertThat(Duration.ofNanos(System.nanoTime() - restoredAt)).isLessThan(Duration.ofSeconds(15));
            assertThat(registry.isSessionAlive()).isTrue();
            assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
                .withMessageContaining("deleted");
        }
        finally {
            this.proxy.restore();
        }
    }

    @Test
    void aHoldLostWithItsSessionIsReportedOnceEvenIfUnlockedBeforeTheSessionTellsIt() throws Exception {
        EtcdLockRegistry registry = registry(track(etcd.newClient()), Duration.ofSeconds(2), Duration.ofSeconds(2));
        FencedLock lock = registry.obtain("session-deadline", true);
        lock.lock();
        try (AutoCloseable clockOnly = sessionEndedByItsClockAlone(registry)) {
            await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(20))
                .until(() -> !lock.isLockedByCurrentThread());
            LostHolds.assertReadsAsLostAndIsCountedOnce(lock, registry);
        }
        await().atMost(LONG).until(() -> registry.getStatistics().getSessionsLost() == 1);
        assertThat(registry.getStatistics().getHoldsLost()).as("holds lost, after the session ended").isEqualTo(1);
    }

    @Test
    void aLocallyPassedHoldLostWithItsSessionIsLoggedWithItsOwnFence() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(LockCore.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        EtcdLockRegistry registry = registry(track(etcd.newClient()), Duration.ofSeconds(2), Duration.ofSeconds(2));
        FencedLock lock = registry.obtain("passed-hold", false);
        ExecutorService second = Executors.newSingleThreadExecutor();
        try {
            lock.lock();
            Future<Long> passed = second.submit(() -> {
                lock.lock();
                return lock.getFence();
            });
            await().atMost(LONG).until(() -> registry.queuedWaiters("passed-hold") == 1);
            lock.unlock();
            long fence = passed.get(LONG.toSeconds(), TimeUnit.SECONDS);
            assertThat(Fences.pass(fence)).as("passed within the process").isPositive();
            try (AutoCloseable clockOnly = sessionEndedByItsClockAlone(registry)) {
                // Ended by the clock alone, and nothing has looked at the hold since: its unlock is the first to.
                await().atMost(LONG).until(() -> !registry.isSessionAlive());
                LockLostException lost = second
                    .submit(() -> catchThrowableOfType(lock::unlock, LockLostException.class))
                    .get(LONG.toSeconds(), TimeUnit.SECONDS);
                assertThat(lost).isNotNull();
                assertThat(lost.getFence()).isEqualTo(fence);
                // The held pass with its own fence; the pass before it, unlocked while the entry was kept,
                // apart (etcd confirms an entry only by writing it, so it may have been struck too).
                assertThat(events.list).filteredOn(event -> event.getLevel() == Level.WARN)
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .satisfiesExactlyInAnyOrder(
                            (held) -> assertThat(held).contains("(fence " + fence + ") lost while held"),
                            (unlocked) -> assertThat(unlocked).contains("1 hold(s) unlocked (fences " + (fence - 1)
                                    + " to " + (fence - 1) + ")"));
            }
        }
        finally {
            logger.detachAppender(events);
            second.shutdownNow();
        }
    }

    /**
     * Leaves the end of {@code registry}'s session to its own clock: another client keeps the lease
     * (and its entries) alive in etcd, and the registry's session thread, which would end the
     * session at its deadline and tell its entries, is kept busy until the result is closed.
     */
    private AutoCloseable sessionEndedByItsClockAlone(EtcdLockRegistry registry) {
        long lease = registry.liveLeaseId();
        Client raw = etcd.newClient();
        ScheduledExecutorService outsider = Executors.newSingleThreadScheduledExecutor();
        outsider.scheduleWithFixedDelay(() -> raw.getLeaseClient().keepAliveOnce(lease), 0, 200, TimeUnit.MILLISECONDS);
        CountDownLatch sessionThreadFree = new CountDownLatch(1);
        registry.runOnSessionThread(() -> awaitQuietly(sessionThreadFree));
        return () -> {
            outsider.shutdownNow();
            sessionThreadFree.countDown();
            raw.close();
        };
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(2, TimeUnit.MINUTES);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private Client proxiedClient() {
        return track(Client.builder()
            .endpoints(this.proxy.endpoint())
            .keepaliveTime(Duration.ofSeconds(30))
            .keepaliveTimeout(Duration.ofSeconds(30))
            .build());
    }

    private EtcdLockRegistry registry(Client client, Duration ttl, Duration requestTimeout) {
        return track(EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(ttl)
            .requestTimeout(requestTimeout)
            .ownerIdentity("edge")
            .build());
    }

    private <T extends AutoCloseable> T track(T resource) {
        this.resources.add(resource);
        return resource;
    }
}
