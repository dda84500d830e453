package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockSnapshot;
import io.github.distlock.LockStatistics;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.BackgroundHolder;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.GrpcCallCounter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Behaviour specific to the etcd engine, against a real single-member etcd: what it writes, how
 * it loses and regains sessions, and how it behaves when etcd is gone.
 */
class EtcdLockRegistryIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    private Client client;

    private Client peerClient;

    private Client rawClient;

    private EtcdLockRegistry registry;

    private EtcdLockRegistry peer;

    private String namespace;

    private String key;

    @BeforeEach
    void setUp(TestInfo test) {
        this.namespace = "/it-" + UUID.randomUUID() + "/";
        this.key = test.getTestMethod().orElseThrow().getName();
        this.client = etcd.newClient();
        this.peerClient = etcd.newClient();
        this.rawClient = etcd.newClient();
        this.registry = newRegistry(this.client, "me", Duration.ofSeconds(2));
        this.peer = newRegistry(this.peerClient, "peer", Duration.ofSeconds(2));
    }

    @AfterEach
    void tearDown() {
        etcd.cluster().ensureAllRunning();
        this.registry.close();
        this.peer.close();
        this.client.close();
        this.peerClient.close();
        this.rawClient.close();
    }

    private EtcdLockRegistry newRegistry(Client client, String owner, Duration ttl) {
        return EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(ttl)
            .ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(2))
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @Test
    void uncontendedLockAndUnlockWriteExactlyTwiceAndLeaveNothing() throws Exception {
        FencedLock warmUp = this.registry.obtain("warm-up");
        warmUp.lock();
        warmUp.unlock();
        for (boolean fair : new boolean[] { false, true }) {
            long before = currentRevision();
            FencedLock lock = this.registry.obtain(this.key, fair);
            lock.lock();
            long fence = lock.getFence();
            lock.unlock();
            long after = currentRevision();
            assertThat(after - before).as("etcd writes for one lock()+unlock(), fair=%s", fair).isEqualTo(2);
            assertThat(fence).isEqualTo(Fences.of(before + 1, 0));
            assertThat(entries(this.key)).isEmpty();
        }
    }

    /**
     * The next waiter saw the whole queue in its write's own read, so the holder's deletion, from
     * the watch, is all it needs: no read of its own (a re-read cost one round trip per handoff).
     * The waiter behind it saw the second waiter too and still waits.
     */
    @Test
    void aFairHandoffCostsTheNextWaiterOneRead() throws Exception {
        GrpcCallCounter calls = new GrpcCallCounter();
        try (Client countedClient = Client.builder().endpoints(etcd.clientEndpoints().toArray(String[]::new))
            .interceptor(calls).build();
                EtcdLockRegistry waiters = newRegistry(countedClient, "waiters", Duration.ofSeconds(10))) {
            FencedLock holder = this.registry.obtain(this.key, true);
            holder.lock();
            CompletableFuture<Long> next = new CompletableFuture<>();
            CountDownLatch nextMayUnlock = new CountDownLatch(1);
            Thread nextWaiter = new Thread(() -> {
                FencedLock lock = waiters.obtain(this.key, true);
                lock.lock();
                next.complete(calls.calls());
                awaitQuietly(nextMayUnlock);
                lock.unlock();
            });
            nextWaiter.start();
            await().atMost(LONG).until(() -> waiters.queuedWaiters(this.key) == 1);
            CompletableFuture<Boolean> third = CompletableFuture.supplyAsync(() -> {
                FencedLock lock = waiters.obtain(this.key, true);
                lock.lock();
                lock.unlock();
                return true;
            });
            await().atMost(LONG).until(() -> waiters.queuedWaiters(this.key) == 2);
            long before = calls.calls();
            holder.unlock();
            assertThat(next.get(LONG.toSeconds(), TimeUnit.SECONDS) - before)
                // The read that shows its entry still exists: the watch may lag behind etcd.
                .as("etcd calls of the waiters' client from the handoff to the next holder").isOne();
            assertThat(third).isNotDone();
            nextMayUnlock.countDown();
            assertThat(third.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            nextWaiter.join(LONG.toMillis());
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(LONG.toSeconds(), TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void entryKeysAreReusedOnceTheirDeleteIsConfirmedSoALockKeepsFewKeys() throws Exception {
        FencedLock lock = this.registry.obtain(this.key, true);
        lock.lock();
        ByteSequence first = entries(this.key).get(0).getKey();
        long firstFence = lock.getFence();
        lock.unlock();
        lock.lock();
        assertThat(entries(this.key).get(0).getKey()).isEqualTo(first);
        assertThat(lock.getFence()).isGreaterThan(firstFence);
        // A second live entry of the same lease never shares a key with the first.
        CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
            try {
                return this.registry.obtain(this.key, true).tryLock(LONG.toSeconds(), TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        assertThat(entries(this.key).get(1).getKey()).isNotEqualTo(first);
        lock.unlock();
        assertThat(other.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void connectGrantsTheSessionAheadOfTheFirstAcquisitionOrReportsWhyItCannot() throws Exception {
        assertThat(this.registry.liveLeaseId()).isZero();
        assertThat(this.registry.isSessionAlive()).isFalse();
        assertThat(this.registry.getSessionRenewalAge()).isNull();
        this.registry.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
        assertThat(this.registry.isSessionAlive()).isTrue();
        assertThat(this.registry.getSessionRenewalAge()).isLessThan(this.registry.getLeaseTtl());
        long lease = this.registry.liveLeaseId();
        assertThat(lease).isNotZero();
        assertThat(this.rawClient.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT)
            .get(10, TimeUnit.SECONDS).getTTL()).isPositive();
        long before = currentRevision();
        FencedLock lock = this.registry.obtain(this.key);
        assertThat(lock.tryLock()).isTrue();
        assertThat(entries(this.key).get(0).getLease()).isEqualTo(lease);
        lock.unlock();
        assertThat(currentRevision() - before).as("writes after connect()").isEqualTo(2);

        etcd.cluster().member(0).stop();
        assertThatThrownBy(() -> this.peer.connect().get(LONG.toSeconds(), TimeUnit.SECONDS))
            .hasMessageContaining("Could not connect to etcd at " + etcd.clientEndpoints());
    }

    @Test
    void entryStoresTheHolderIdentityAndTheLeaseAndUsesTheEscapedRoot() throws Exception {
        String lockKey = "orders/42%";
        FencedLock lock = this.registry.obtain(lockKey, true);
        lock.lock();
        try {
            List<KeyValue> entries = entries(lockKey);
            assertThat(entries).hasSize(1);
            KeyValue entry = entries.get(0);
            assertThat(text(entry.getKey())).startsWith(this.namespace + "#orders%2F42%25/");
            String[] lines = text(entry.getValue()).split("\n");
            assertThat(lines).hasSize(3);
            assertThat(lines[0]).isEqualTo("me");
            assertThat(lines[1]).isEqualTo(Thread.currentThread().getName());
            assertThat(Instant.ofEpochMilli(Long.parseLong(lines[2])))
                .isBetween(Instant.now().minus(LONG), Instant.now());
            assertThat(entry.getLease()).isNotZero();
            assertThat(entry.getCreateRevision()).isEqualTo(Fences.storeFence(lock.getFence()));
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void timeoutOnEtcdNamesTheHolder() throws Exception {
        FencedLock held = this.peer.obtain(this.key);
        held.lock();
        try {
            assertThat(this.registry.obtain(this.key).tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(this.registry.obtain(this.key).getHolder()).startsWith("peer/");
        }
        finally {
            held.unlock();
        }
        assertThat(this.registry.obtain(this.key).getHolder()).isNull();
    }

    @Test
    void holdEndsWhenItsEntryIsDeletedBehindItsBack() throws Exception {
        FencedLock lock = this.registry.obtain(this.key);
        lock.lock();
        long fence = lock.getFence();
        this.rawClient.getKVClient()
            .delete(root(this.key), DeleteOption.builder().isPrefix(true).build())
            .get(10, TimeUnit.SECONDS);
        await().atMost(LONG).pollInSameThread().until(() -> !lock.isLockedByCurrentThread());
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
            .satisfies(ex -> assertThat(ex.getFence()).isEqualTo(fence))
            .withMessageContaining(this.key)
            .withMessageContaining("deleted");
        assertThat(lock.getHoldCount()).isZero();
        FencedLock again = this.registry.obtain(this.key);
        assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(again.getFence()).isGreaterThan(fence);
        again.unlock();
    }

    /**
     * One prefix delete removes the holder's entry and every waiter's in one revision, and the
     * watch delivers them one by one in key order: a waiter must not take the deletion of the
     * entry ahead of it for its turn before its own deletion, which comes right after, or it holds
     * on a deleted entry with a fence below any written since. Every waiter queues again and gets
     * a fence above the delete's revision. (The nemesis found the race once; many waiters make it
     * likelier to show.)
     */
    @Test
    void waitersDeletedWithTheHolderInOnePrefixDeleteQueueAgainAboveIt() throws Exception {
        int waiters = 16;
        FencedLock holder = this.registry.obtain(this.key, true);
        holder.lock();
        List<CompletableFuture<Long>> fences = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            fences.add(BackgroundAcquirer.acquireAndRelease(this.registry.obtain(this.key, true), LONG));
        }
        await().atMost(LONG).until(() -> entries(this.key).size() == waiters + 1);
        long deletedAt = this.rawClient.getKVClient()
            .delete(root(this.key), DeleteOption.builder().isPrefix(true).build())
            .get(10, TimeUnit.SECONDS).getHeader().getRevision();
        await().atMost(LONG).pollInSameThread().until(() -> !holder.isLockedByCurrentThread());
        assertThatExceptionOfType(LockLostException.class).isThrownBy(holder::unlock);
        for (CompletableFuture<Long> fence : fences) {
            assertThat(Fences.storeFence(fence.get(LONG.toMillis() * 2, TimeUnit.MILLISECONDS)))
                .as("a waiter's fence, against the delete's revision %d", deletedAt).isGreaterThan(deletedAt);
        }
    }

    /**
     * A release owns its key until etcd answered its delete: the ghost sweep, which deletes the
     * session lease's keys that no registered entry owns, must not take it first (the release's
     * compare would fail and the hold read as lost).
     */
    @Test
    void anEntryBeingReleasedStaysOwnedUntilItsDeleteIsAnswered() throws Exception {
        try (Client ownClient = etcd.newClient();
                EtcdLockRegistry own = newRegistry(ownClient, "releasing", Duration.ofSeconds(10))) {
            BackgroundHolder holder = BackgroundHolder.hold(own.obtain(this.key, true), LONG, "releasing-holder");
            assertThat(own.registeredEntries()).isEqualTo(1);
            etcd.cluster().member(0).pause();
            try {
                holder.release();
                await().atMost(LONG).until(() -> holder.isIn(QueueEntry.class, "releaseWithRetries"));
                assertThat(own.registeredEntries()).as("entries owned while the release waits for etcd").isEqualTo(1);
            }
            finally {
                etcd.cluster().member(0).resume();
            }
            assertThat(holder.released()).succeedsWithin(LONG);
            assertThat(own.registeredEntries()).isZero();
            assertThat(entries(this.key)).isEmpty();
        }
    }

    @Test
    void holdIsLostWithinOneTtlWhenEtcdStopsAnsweringAndANewSessionServesLaterCalls() throws Exception {
        FencedLock lock = this.registry.obtain(this.key, true);
        lock.lock();
        long fence = lock.getFence();
        long pausedAt = System.nanoTime();
        etcd.cluster().member(0).pause();
        try {
            await().atMost(LONG).pollInSameThread().pollInterval(Duration.ofMillis(20))
                .until(() -> !lock.isLockedByCurrentThread());
            assertThat(this.registry.isSessionAlive()).isFalse();
            assertThat(this.registry.getSessionRenewalAge()).isGreaterThanOrEqualTo(this.registry.getLeaseTtl());
            // TTL is 2 s; the client must notice within about one TTL of the last acknowledged keep-alive.
            assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isLessThan(Duration.ofSeconds(3));
        }
        finally {
            etcd.cluster().member(0).resume();
        }
        assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock)
            .satisfies(ex -> assertThat(ex.getKey()).isEqualTo(this.key));
        LockStatistics statistics = this.registry.getStatistics();
        // The hold reads as lost by the clock at its deadline; the counters come from the session's
        // expiry task, which runs just after it.
        await().atMost(LONG).untilAsserted(() -> {
            assertThat(statistics.getHoldsLost()).as("holds lost").isEqualTo(1);
            assertThat(statistics.getSessionsLost()).as("sessions lost").isEqualTo(1);
            assertThat(statistics.getBackendErrors()).as("failed keep-alives").isPositive();
        });
        assertThat(this.registry.getHeldLockCount()).isZero();
        FencedLock again = this.registry.obtain(this.key, true);
        assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(again.getFence()).isGreaterThan(fence);
        assertThat(statistics.getAcquired()).isEqualTo(2);
        again.unlock();
    }

    @Test
    void tryLockWithTimeoutFailsWithinItsTimeoutWhenEtcdIsDown() throws Exception {
        // A registry with no session yet must grant a lease first: that is what fails.
        etcd.cluster().member(0).stop();
        FencedLock lock = this.registry.obtain(this.key);
        long start = System.nanoTime();
        assertThatThrownBy(() -> lock.tryLock(1500, TimeUnit.MILLISECONDS))
            .isInstanceOf(LockAcquisitionException.class)
            .hasMessageContaining(this.key)
            .hasMessageContaining(etcd.cluster().clientEndpoint());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1500 + 1000));
        start = System.nanoTime();
        assertThatThrownBy(lock::lock).isInstanceOf(LockAcquisitionException.class);
        // lock() gives up once etcd failed for longer than the request timeout (2 s here).
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2 + 3));
        assertThat(this.registry.getStatistics().getFailed()).isEqualTo(2);
        assertThat(this.registry.getStatistics().getBackendErrors()).isGreaterThanOrEqualTo(2);
        assertThat(this.registry.getStatistics().getAcquired()).isZero();
        etcd.cluster().member(0).restart();
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        lock.unlock();
    }

    @Test
    void tryLockDoesNotWaitForAnotherThreadsLeaseGrantPastItsTimeout() throws Exception {
        etcd.cluster().member(0).stop();
        // This thread grants the session lease: with etcd down it waits the whole request timeout (2 s).
        CompletableFuture<Throwable> granting = CompletableFuture.supplyAsync(() -> {
            try {
                this.registry.obtain("other-" + this.key).lock();
                return null;
            }
            catch (RuntimeException ex) {
                return ex;
            }
        });
        await().atMost(LONG).pollInterval(Duration.ofMillis(5)).until(this.registry::sessionGrantInProgress);
        long start = System.nanoTime();
        assertThatThrownBy(() -> this.registry.obtain(this.key).tryLock(200, TimeUnit.MILLISECONDS))
            .isInstanceOf(LockAcquisitionException.class);
        // One try-once budget (1 s), not the other thread's grant (2 s).
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1800));
        assertThat(granting.get(LONG.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(LockAcquisitionException.class);
    }

    @Test
    void waiterGivesUpWithinItsTimeoutWhenEtcdDiesWhileItWaits() throws Exception {
        FencedLock held = this.peer.obtain(this.key);
        held.lock();
        FencedLock waiting = this.registry.obtain(this.key);
        CompletableFuture<Object> outcome = CompletableFuture.supplyAsync(() -> {
            try {
                return waiting.tryLock(3, TimeUnit.SECONDS);
            }
            catch (Exception ex) {
                return ex;
            }
        });
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        long start = System.nanoTime();
        etcd.cluster().member(0).kill();
        Object result = outcome.get(10, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3 + 2));
        assertThat(result).satisfiesAnyOf(r -> assertThat(r).isEqualTo(Boolean.FALSE),
                r -> assertThat(r).isInstanceOf(LockAcquisitionException.class));
    }

    @Test
    void tryOnceRightAfterAFailedOneIsNotBlockedByThatOnesEntry() throws Exception {
        // The failed try-once's entry is deleted in the background; the next try-once may find it
        // ahead of its own while the lock is free. Repeated, because the window is a round trip.
        FencedLock held = this.peer.obtain(this.key);
        FencedLock trying = this.registry.obtain(this.key);
        for (int round = 0; round < 25; round++) {
            held.lock();
            assertThat(trying.tryLock()).as("round %d, while held", round).isFalse();
            held.unlock();
            assertThat(trying.tryLock()).as("round %d, once free", round).isTrue();
            trying.unlock();
        }
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    @Test
    void closeReleasesHeldLocksSoOthersGetThemAtOnce() throws Exception {
        FencedLock held = this.registry.obtain(this.key);
        held.lock();
        FencedLock waiter = this.peer.obtain(this.key, true);
        CompletableFuture<Boolean> acquired = CompletableFuture.supplyAsync(() -> {
            try {
                boolean got = waiter.tryLock(LONG.toSeconds(), TimeUnit.SECONDS);
                if (got) {
                    waiter.unlock();
                }
                return got;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        long start = System.nanoTime();
        this.registry.close();
        assertThat(acquired.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // Well below the 2 s TTL: the lease was revoked, not left to expire.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThat(held.isLockedByCurrentThread()).isFalse();
        assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock);
        assertThatThrownBy(() -> this.registry.obtain(this.key)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("closed");
    }

    @Test
    void waiterWhoseSessionIsLostQueuesAgainWithANewSession() throws Exception {
        FencedLock held = this.peer.obtain(this.key);
        held.lock();
        FencedLock waiting = this.registry.obtain(this.key, true);
        AtomicReference<Long> fence = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                if (waiting.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    fence.set(waiting.getFence());
                    waiting.unlock();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                done.countDown();
            }
        });
        waiter.start();
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        long waiterLease = entries(this.key).get(1).getLease();
        this.rawClient.getLeaseClient().revoke(waiterLease).get(10, TimeUnit.SECONDS);
        await().atMost(LONG).until(() -> entries(this.key).size() == 2
                && entries(this.key).get(1).getLease() != waiterLease);
        held.unlock();
        assertThat(done.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(fence.get()).isNotNull();
        waiter.join(LONG.toMillis());
    }

    @Test
    void nestedNamespacesNeverSeeOrQueueBehindEachOthersEntries() throws Exception {
        // The outer registry's lock 'orders' once had the inner namespace as its root.
        try (Client innerClient = etcd.newClient();
                EtcdLockRegistry inner = EtcdLockRegistry.builder(innerClient)
                    .namespace(this.namespace + "orders/")
                    .leaseTtl(Duration.ofSeconds(2))
                    .ownerIdentity("inner")
                    .requestTimeout(Duration.ofSeconds(2))
                    .build()) {
            FencedLock innerHeld = inner.obtain("42", true);
            innerHeld.lock();
            try {
                for (boolean fair : new boolean[] { false, true }) {
                    FencedLock outer = this.registry.obtain("orders", fair);
                    assertThat(outer.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as("fair=%s", fair).isTrue();
                    assertThat(outer.isLockedByCurrentThread()).isTrue();
                    assertThat(this.registry.describeLocks(100).locks()).extracting(LockSnapshot::key)
                        .containsExactly("orders");
                    assertThat(inner.describeLocks(100).locks()).extracting(LockSnapshot::key).containsExactly("42");
                    outer.unlock();
                }
                // Handoffs in the outer namespace still reach waiters there, with the inner one busy.
                FencedLock holder = this.registry.obtain("orders", true);
                holder.lock();
                CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                    FencedLock lock = this.peer.obtain("orders", true);
                    lock.lock();
                    long fence = lock.getFence();
                    lock.unlock();
                    return fence;
                });
                await().atMost(LONG).until(() -> this.peer.queuedWaiters("orders") == 1);
                holder.unlock();
                assertThat(waiter.get(LONG.toSeconds(), TimeUnit.SECONDS)).isPositive();
                assertThat(innerHeld.isLockedByCurrentThread()).isTrue();
            }
            finally {
                innerHeld.unlock();
            }
        }
    }

    @Test
    void namespacesWithTheLockMarkerAreRejected() {
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).namespace("/locks#1/"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("must not contain '#'")
            .hasMessageContaining("/locks#1/");
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).namespace("/locks\uD800/"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("lone surrogate");
    }

    @Test
    void entryWrittenByAnAttemptWhoseAnswerWasLostIsAdoptedNotWrittenTwice() throws Exception {
        KeyValue planted = plantTheNextEntryAsALostAnswerWouldLeaveIt();
        FencedLock lock = this.registry.obtain(this.key);
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        List<KeyValue> entries = entries(this.key);
        assertThat(entries).extracting(KeyValue::getKey).containsExactly(planted.getKey());
        assertThat(entries.get(0).getVersion()).as("writes of the entry").isEqualTo(1);
        assertThat(Fences.storeFence(lock.getFence())).as("store fence").isEqualTo(planted.getCreateRevision());
        lock.unlock();
        assertThat(entries(this.key)).isEmpty();
    }

    /**
     * The answer to a later attempt reads the newest entries only: with more entries queued
     * behind the adopted one than it reads, none of them is older, and the entry still holds.
     */
    @Test
    void entryAdoptedBehindMoreNewerEntriesThanOneReadReturnsHolds() throws Exception {
        KeyValue planted = plantTheNextEntryAsALostAnswerWouldLeaveIt();
        long lease = this.rawClient.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
        try {
            for (int behind = 0; behind < 20; behind++) {
                this.rawClient.getKVClient()
                    .put(EtcdKeyspace.entry(root(this.key), lease, behind), ByteSequence.from("peer/" + behind,
                            StandardCharsets.UTF_8), PutOption.builder().withLeaseId(lease).build())
                    .get(10, TimeUnit.SECONDS);
            }
            FencedLock lock = this.registry.obtain(this.key);
            assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(Fences.storeFence(lock.getFence())).as("store fence").isEqualTo(planted.getCreateRevision());
            lock.unlock();
            assertThat(entries(this.key)).extracting(KeyValue::getKey).doesNotContain(planted.getKey()).hasSize(20);
        }
        finally {
            this.rawClient.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * Puts the entry that the registry's next acquisition of {@link #key} will write (the number
     * its last entry used), under its session lease, as a first attempt would that etcd applied
     * but whose answer never came back.
     * @return the entry as put
     */
    private KeyValue plantTheNextEntryAsALostAnswerWouldLeaveIt() throws Exception {
        FencedLock warmUp = this.registry.obtain("warm-" + this.key);
        warmUp.lock();
        KeyValue warmEntry = entries("warm-" + this.key).get(0);
        warmUp.unlock();
        String suffix = text(warmEntry.getKey()).substring(text(root("warm-" + this.key)).length());
        ByteSequence entryKey = root(this.key).concat(ByteSequence.from(suffix, StandardCharsets.UTF_8));
        this.rawClient.getKVClient()
            .put(entryKey, warmEntry.getValue(), PutOption.builder().withLeaseId(warmEntry.getLease()).build())
            .get(10, TimeUnit.SECONDS);
        return entries(this.key).get(0);
    }

    @Test
    void entryWrittenAfterItsAcquisitionGaveUpIsSweptFromTheSessionLease() throws Exception {
        FencedLock held = this.registry.obtain("held-" + this.key);
        held.lock();
        KeyValue heldEntry = entries("held-" + this.key).get(0);
        // What a write that etcd applied after the acquisition had timed out and deleted its entry
        // leaves behind: an entry under the live session lease that no acquisition owns.
        ByteSequence ghost = EtcdKeyspace.entry(root(this.key), heldEntry.getLease(), Long.MAX_VALUE);
        this.rawClient.getKVClient()
            .put(ghost, ByteSequence.from("me/gone", StandardCharsets.UTF_8),
                    PutOption.builder().withLeaseId(heldEntry.getLease()).build())
            .get(10, TimeUnit.SECONDS);
        assertThat(this.peer.obtain(this.key).tryLock()).isFalse();
        this.registry.sweepForGhosts();
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
        FencedLock freed = this.peer.obtain(this.key);
        assertThat(freed.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        freed.unlock();
        assertThat(held.isLockedByCurrentThread()).isTrue();
        assertThat(entries("held-" + this.key)).hasSize(1);
        held.unlock();
    }

    /** The sweep on a client with a namespace of its own: etcd names the lease's keys with it in front. */
    @Test
    void ghostsAreSweptAlsoThroughAClientWithANamespace() throws Exception {
        ByteSequence clientNamespace = ByteSequence.from("/app-" + UUID.randomUUID() + "/", StandardCharsets.UTF_8);
        try (Client namespaced = Client.builder().endpoints(etcd.clientEndpoints().toArray(String[]::new))
            .namespace(clientNamespace).build();
                EtcdLockRegistry own = newRegistry(namespaced, "namespaced", Duration.ofSeconds(10))) {
            FencedLock held = own.obtain("held-" + this.key);
            held.lock();
            long lease = own.liveLeaseId();
            ByteSequence ghost = EtcdKeyspace.entry(root(this.key), lease, Long.MAX_VALUE);
            this.rawClient.getKVClient()
                .put(clientNamespace.concat(ghost), ByteSequence.from("me/gone", StandardCharsets.UTF_8),
                        PutOption.builder().withLeaseId(lease).build())
                .get(10, TimeUnit.SECONDS);
            own.sweepForGhosts();
            await().atMost(LONG).until(() -> this.rawClient.getKVClient().get(clientNamespace.concat(ghost))
                .get(10, TimeUnit.SECONDS).getKvs().isEmpty());
            assertThat(held.isLockedByCurrentThread()).isTrue();
            assertThat(this.rawClient.getKVClient().get(clientNamespace.concat(root("held-" + this.key)),
                    GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs()).hasSize(1);
            held.unlock();
        }
    }

    private long currentRevision() throws Exception {
        return this.rawClient.getKVClient().get(ByteSequence.from("/", StandardCharsets.UTF_8))
            .get(10, TimeUnit.SECONDS).getHeader().getRevision();
    }

    private ByteSequence root(String lockKey) {
        return new EtcdKeyspace(this.namespace).root(lockKey);
    }

    private List<KeyValue> entries(String lockKey) throws Exception {
        return this.rawClient.getKVClient()
            .get(root(lockKey), GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build())
            .get(10, TimeUnit.SECONDS).getKvs();
    }

    private static String text(ByteSequence bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
