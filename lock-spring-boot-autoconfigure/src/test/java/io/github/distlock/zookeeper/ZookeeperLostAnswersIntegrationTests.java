package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.BackgroundHolder;
import io.github.distlock.testsupport.LostHolds;
import io.github.distlock.testsupport.TcpProxy;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Answers lost with a connection. Entries of a registry's live session that no acquisition answers
 * for, as a create whose answer was lost leaves them (ZooKeeper applied it, the client never heard,
 * and Curator's protection looked for it on a member that had not applied it yet): without their
 * deletion they would block the lock for as long as the process lives; they are planted here
 * through the registry's own client, with its entry tag, as such a create leaves them. And a
 * release whose delete Curator resends after a reconnect, which finds the node gone.
 */
class ZookeeperLostAnswersIntegrationTests {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static CuratorFramework client;

    private static CuratorFramework peerClient;

    private static ZookeeperLockRegistry registry;

    private static ZookeeperLockRegistry peer;

    @BeforeAll
    static void start() {
        client = ZookeeperTestClients.started(zookeeper.ensemble());
        peerClient = ZookeeperTestClients.started(zookeeper.ensemble());
        registry = ZookeeperLockRegistry.builder(client).namespace("/orphans").ownerIdentity("registry")
            .description(zookeeper.ensemble().toString()).build();
        peer = ZookeeperLockRegistry.builder(peerClient).namespace("/orphans").ownerIdentity("peer")
            .description(zookeeper.ensemble().toString()).build();
    }

    /** @return the listener through which Curator tells {@code registry}'s store of connection states */
    private static ConnectionStateListener stateListenerOf(ZookeeperLockRegistry registry) throws ReflectiveOperationException {
        java.lang.reflect.Field field = ZookeeperLockStore.class.getDeclaredField("connectionStates");
        field.setAccessible(true);
        return (ConnectionStateListener) field.get(registry.zookeeper());
    }

    @AfterAll
    static void stop() {
        registry.close();
        peer.close();
        client.close();
        peerClient.close();
    }

    /**
     * A waiter whose session was declared lost (the loss not told to its entry yet, as between
     * loseSession's steps) must not take the key when the head ahead of it goes: its node may have
     * died with its session. It queues again on a new session instead, and holds there.
     */
    @Test
    void aWaiterWhoseSessionWasLostDoesNotTakeTheKeyOnTheOldSession() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        String key = "lost-waiter-" + UUID.randomUUID();
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("own").description(zookeeper.ensemble().toString()).build()) {
            FencedLock held = peer.obtain(key, true);
            assertThat(held.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            FencedLock lock = own.obtain(key, true);
            CompletableFuture<Boolean> stillHeld = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    boolean acquired = lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    // Looked at at once: a hold on the lost session reads as lost.
                    stillHeld.complete(acquired && lock.isLockedByCurrentThread());
                    if (acquired) {
                        lock.unlock();
                    }
                }
                catch (Throwable ex) {
                    stillHeld.completeExceptionally(ex);
                }
            });
            waiter.start();
            await().atMost(WAIT).until(() -> own.getWaitingThreadCount() == 1);
            ZookeeperSession session = own.zookeeper().session();
            assertThat(session).isNotNull();
            assertThat(session.lose("ended by the test")).isTrue();
            held.unlock();
            assertThat(stillHeld).as("held on a live session").succeedsWithin(WAIT).isEqualTo(true);
            waiter.join(WAIT.toMillis());
        }
        finally {
            ownClient.close();
        }
    }

    /**
     * A lost session tells its entries one after another, after its warning: a hold read in
     * between must already read as lost (the state is set up here by ending the session alone).
     */
    @Test
    void aHoldReadsAsLostOnceItsSessionIsEvenBeforeTheLossReachesItsEntry() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/session-loss")
            .ownerIdentity("own").description(zookeeper.ensemble().toString()).build()) {
            FencedLock lock = own.obtain("held-" + UUID.randomUUID(), true);
            assertThat(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            ZookeeperSession session = own.zookeeper().session();
            assertThat(session).isNotNull();
            assertThat(session.lose("ended by the test")).isTrue();
            LostHolds.assertReadsAsLostAndIsCountedOnce(lock, own);
        }
        finally {
            ownClient.close();
        }
    }

    /**
     * Curator tells connection states on one thread, late: an acquisition after an expiry may start
     * the next session on the reconnected client before the expiry's LOST is told. That LOST ended
     * the session before, not the one the acquisition holds on.
     */
    @Test
    void aLostStateToldAfterTheNextSessionStartedDoesNotEndIt() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        CountDownLatch stateHeldBack = new CountDownLatch(1);
        CountDownLatch tellStates = new CountDownLatch(1);
        Queue<ConnectionState> told = new ConcurrentLinkedQueue<>();
        // Holds back the first state after the expiry (SUSPENDED), and with it every state behind it.
        ConnectionStateListener holdBack = (curator, state) -> {
            told.add(state);
            stateHeldBack.countDown();
            try {
                tellStates.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        };
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/late-states")
            .ownerIdentity("own").description(zookeeper.ensemble().toString()).build()) {
            own.connect().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            ZookeeperSession expired = own.zookeeper().session();
            ownClient.getConnectionStateListenable().addListener(holdBack);
            FencedLock lock = own.obtain("late-lost-" + UUID.randomUUID(), true);
            try {
                ZookeeperTestClients.expireSession(ownClient, zookeeper.ensemble());
                assertThat(stateHeldBack.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("a state told").isTrue();
                // Connected again on a new session, its states not told yet.
                assertThat(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("acquired").isTrue();
                assertThat(own.zookeeper().session()).isNotSameAs(expired);
            }
            finally {
                tellStates.countDown();
            }
            await().atMost(WAIT).until(() -> told.contains(ConnectionState.LOST)
                    && List.copyOf(told).lastIndexOf(ConnectionState.RECONNECTED) > List.copyOf(told)
                        .indexOf(ConnectionState.LOST));
            assertThat(lock.isLockedByCurrentThread()).as("held once the states were told").isTrue();
            assertThat(own.getStatistics().getHoldsLost()).as("holds lost").isZero();
            lock.unlock();
        }
        finally {
            ownClient.getConnectionStateListenable().removeListener(holdBack);
            ownClient.close();
        }
    }

    /**
     * A connection lost and found again on the same session, its RECONNECTED not told yet (Curator
     * tells states late, on one thread, behind slow listeners): the session lives on and its syncs
     * are answered, so the holds on it stay, and health calls it alive. A timer from the SUSPENDED
     * ended it after a third of the session timeout before, and health called it dead at once.
     */
    @Test
    void aReconnectionToldLateDoesNotEndALiveSession() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/late-reconnect")
            .ownerIdentity("own").description(zookeeper.ensemble().toString()).build()) {
            FencedLock lock = own.obtain("held-" + UUID.randomUUID(), true);
            assertThat(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            long session = ownClient.getZookeeperClient().getZooKeeper().getSessionId();
            ConnectionStateListener storeListener = stateListenerOf(own);
            Queue<ConnectionState> told = new ConcurrentLinkedQueue<>();
            ConnectionStateListener observer = (curator, state) -> told.add(state);
            ownClient.getConnectionStateListenable().removeListener(storeListener);
            ownClient.getConnectionStateListenable().addListener(observer);
            try {
                // The store is told of the loss; the reconnection's state stays queued.
                storeListener.stateChanged(ownClient, ConnectionState.SUSPENDED);
                ownClient.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
                await().atMost(WAIT).until(() -> List.copyOf(told).equals(List.of(ConnectionState.SUSPENDED,
                        ConnectionState.RECONNECTED)));
                await().during(Duration.ofMillis(ZookeeperTestClients.SESSION_TIMEOUT_MILLIS))
                    .atMost(Duration.ofMillis(ZookeeperTestClients.SESSION_TIMEOUT_MILLIS).plus(WAIT))
                    .until(() -> own.getStatistics().getHoldsLost() == 0 && own.isSessionAlive());
                assertThat(ownClient.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
            }
            finally {
                ownClient.getConnectionStateListenable().removeListener(observer);
                ownClient.getConnectionStateListenable().addListener(storeListener);
                storeListener.stateChanged(ownClient, ConnectionState.RECONNECTED);
            }
            assertThat(lock.isLockedByCurrentThread()).isTrue();
            lock.unlock();
            assertThat(own.getStatistics().getHoldsLost()).isZero();
        }
        finally {
            ownClient.close();
        }
    }

    /**
     * An expiry whose states Curator has not told yet (they come late, on one thread): the
     * client's next session answers the pings, which must not keep the expired one alive.
     */
    @Test
    void aHoldOnAnExpiredSessionReadsAsLostBeforeCuratorTellsOfTheExpiry() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/late-expiry")
            .ownerIdentity("own").description(zookeeper.ensemble().toString()).build()) {
            FencedLock lock = own.obtain("held-" + UUID.randomUUID(), true);
            assertThat(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            // Curator's states never reach the store: as if they were still queued.
            ownClient.getConnectionStateListenable().removeListener(stateListenerOf(own));
            long expired = ownClient.getZookeeperClient().getZooKeeper().getSessionId();
            ZookeeperTestClients.expireSession(ownClient, zookeeper.ensemble());
            await().atMost(WAIT).until(() -> ownClient.getZookeeperClient().isConnected()
                    && ownClient.getZookeeperClient().getZooKeeper().getSessionId() != expired);
            await().atMost(Duration.ofMillis(ZookeeperTestClients.SESSION_TIMEOUT_MILLIS)).pollInSameThread()
                .until(() -> !lock.isLockedByCurrentThread());
            assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        }
        finally {
            ownClient.close();
        }
    }

    /**
     * Followers of a leader try its lock again and again, each attempt watching the holder's node
     * until it gives up: the watches must go with the attempts (a watch stays in the client until
     * its node changes, and keeps its ended entry reachable).
     */
    @Test
    void attemptsThatGaveUpLeaveNoWatchOnTheHolder() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        String key = "watched-" + UUID.randomUUID();
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("follower").description(zookeeper.ensemble().toString()).build()) {
            FencedLock held = peer.obtain(key, true);
            assertThat(held.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            try {
                FencedLock lock = own.obtain(key, true);
                for (int attempt = 0; attempt < 50; attempt++) {
                    assertThat(lock.tryLock(10, TimeUnit.MILLISECONDS)).isFalse();
                }
                // Removed in the background, once each.
                await().atMost(WAIT).until(() -> dataWatches(ownClient) <= 1);
            }
            finally {
                held.unlock();
            }
        }
        finally {
            ownClient.close();
        }
    }

    /** @return the data watches the client keeps, over all paths (ZooKeeper's own bookkeeping) */
    @SuppressWarnings("unchecked")
    private static int dataWatches(CuratorFramework curator) throws Exception {
        Object handle = curator.getZookeeperClient().getZooKeeper();
        java.lang.reflect.Method manager = org.apache.zookeeper.ZooKeeper.class.getDeclaredMethod("getWatchManager");
        manager.setAccessible(true);
        Object watchManager = manager.invoke(handle);
        java.lang.reflect.Method watches = watchManager.getClass().getDeclaredMethod("getDataWatches");
        watches.setAccessible(true);
        Map<String, Set<Watcher>> byPath = (Map<String, Set<Watcher>>) watches.invoke(watchManager);
        synchronized (byPath) {
            return byPath.values().stream().mapToInt(Set::size).sum();
        }
    }

    @Test
    void aWaiterDeletesAnEntryOfItsRegistryThatNoAcquisitionAnswersFor() throws Exception {
        String key = "orphan-" + UUID.randomUUID();
        String orphan = plantOrphan(key);
        FencedLock lock = registry.obtain(key, true);

        assertThat(lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("acquired behind the orphan").isTrue();
        try {
            assertThat(client.checkExists().forPath(orphan)).as("the orphan").isNull();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void entriesOfAnotherRegistryOnTheSameSessionAreNotTakenForOrphans() throws Exception {
        String key = "shared-session-" + UUID.randomUUID();
        ZookeeperLockRegistry sameClient = ZookeeperLockRegistry.builder(client).namespace("/orphans")
            .ownerIdentity("same-client").description(zookeeper.ensemble().toString()).build();
        try {
            FencedLock held = sameClient.obtain(key, true);
            assertThat(held.tryLock()).isTrue();
            try {
                FencedLock waiting = registry.obtain(key, true);
                assertThat(waiting.tryLock(1, TimeUnit.SECONDS)).as("acquired while the other registry holds").isFalse();
                assertThat(held.isLockedByCurrentThread()).isTrue();
            }
            finally {
                held.unlock();
            }
        }
        finally {
            sameClient.close();
        }
    }

    @Test
    void anEntryLeftByACreateAcrossAConnectionLossIsDeletedWithoutAWaiter() throws Exception {
        String key = "across-" + UUID.randomUUID();
        FencedLock lock = registry.obtain(key, true);
        CountDownLatch suspended = new CountDownLatch(1);
        // Told on Curator's one state thread, in no fixed order among listeners: the connection was lost.
        ConnectionStateListener listener = (curator, state) -> {
            if (state == ConnectionState.SUSPENDED) {
                suspended.countDown();
            }
        };
        client.getConnectionStateListenable().addListener(listener);
        // With its session started, the acquisition's first call is the create.
        registry.connect().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            zookeeper.ensemble().member(0).pause();
            CompletableFuture<Long> acquired;
            try {
                acquired = BackgroundAcquirer.acquireAndRelease(lock, WAIT);
                await().atMost(WAIT).until(() -> registry.isCreateInFlight(key));
                client.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
                assertThat(suspended.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("suspended").isTrue();
            }
            finally {
                zookeeper.ensemble().member(0).resume();
            }
            acquired.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        finally {
            client.getConnectionStateListenable().removeListener(listener);
        }
        // As if the create had also landed a second time, on a member that answered nobody.
        String orphan = plantOrphan(key);

        FencedLock peerLock = peer.obtain(key, true);
        assertThat(peerLock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the peer acquired").isTrue();
        try {
            assertThat(client.checkExists().forPath(orphan)).as("the orphan").isNull();
        }
        finally {
            peerLock.unlock();
        }
    }

    @Test
    void anAcquisitionInterruptedDuringItsCreateLeavesNothingInTheWayOfTheNext() throws Exception {
        String key = "interrupted-create-" + UUID.randomUUID();
        // A long request timeout: a node left to the sweeper's stale-call expiry (two of them) would block the peer.
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("interrupted").requestTimeout(Duration.ofSeconds(30))
            .description(zookeeper.ensemble().toString()).build()) {
            FencedLock lock = own.obtain(key, true);
            own.connect().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread acquirer = new Thread(() -> {
                try {
                    lock.lockInterruptibly();
                    lock.unlock();
                    outcome.complete(null);
                }
                catch (Throwable ex) {
                    outcome.complete(ex);
                }
            }, "interrupted-create");
            zookeeper.ensemble().member(0).pause();
            try {
                acquirer.start();
                await().atMost(WAIT).until(() -> own.isCreateInFlight(key));
                acquirer.interrupt();
                assertThat(outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(InterruptedException.class);
            }
            finally {
                zookeeper.ensemble().member(0).resume();
            }
            // The create lands once the server is back; what it created must go at once.
            FencedLock peerLock = peer.obtain(key, true);
            assertThat(peerLock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the peer acquired").isTrue();
            peerLock.unlock();
            await().atMost(WAIT).until(() -> !own.isCreateInFlight(key));
        }
        finally {
            ownClient.close();
        }
    }

    @Test
    void connectWaitsForZookeeperOffTheMaintenanceThreadAndFailsOnceClosed() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        // A long request timeout: connecting must outlast the pause, however slow the machine.
        ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("connecting").requestTimeout(Duration.ofSeconds(30))
            .description(zookeeper.ensemble().toString()).build();
        try {
            CompletableFuture<Void> connected;
            zookeeper.ensemble().member(0).pause();
            try {
                // No session yet: connecting waits for ZooKeeper's answer, on a thread of its own...
                connected = own.connect();
                await().atMost(WAIT).until(() -> threadsIn("liveSession").anyMatch(name -> name.startsWith(
                        "distlock-zookeeper-connect")));
                // ...not on the thread whose timers report lost holds and sweep orphans.
                assertThat(threadsIn("liveSession")).noneMatch(name -> name.equals("distlock-zookeeper-maintenance"));
            }
            finally {
                zookeeper.ensemble().member(0).resume();
            }
            assertThat(connected).succeedsWithin(WAIT);
        }
        finally {
            own.close();
            ownClient.close();
        }
        assertThat(own.connect()).failsWithin(WAIT).withThrowableThat().withMessageContaining("closed");
    }

    /**
     * A close while an acquisition starts the registry's session: the session it starts ends with
     * the close, so nothing of the closed registry stays in ZooKeeper on the client's live session.
     */
    @Test
    void aSessionStartedWhileTheRegistryClosesEndsWithIt() throws Exception {
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble());
        String key = "closing-" + UUID.randomUUID();
        ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("closing").requestTimeout(Duration.ofSeconds(30))
            .description(zookeeper.ensemble().toString()).build();
        try {
            FencedLock lock = own.obtain(key, true);
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread acquirer = new Thread(() -> {
                try {
                    if (lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                        lock.unlock();
                    }
                    outcome.complete(null);
                }
                catch (Throwable ex) {
                    outcome.complete(ex);
                }
            }, "acquiring-while-closing");
            zookeeper.ensemble().member(0).pause();
            try {
                acquirer.start();
                // Past the check that the registry is open, waiting for the session's first answer.
                await().atMost(WAIT).until(() -> threadsIn("liveSession").anyMatch("acquiring-while-closing"::equals));
                own.close();
            }
            finally {
                zookeeper.ensemble().member(0).resume();
            }
            assertThat(outcome.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the acquisition's outcome")
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            FencedLock peerLock = peer.obtain(key, true);
            assertThat(peerLock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the peer acquired").isTrue();
            peerLock.unlock();
        }
        finally {
            own.close();
            ownClient.close();
        }
    }

    /** @return the names of the threads with a frame of a ZooKeeper store method named {@code method} */
    private static Stream<String> threadsIn(String method) {
        return Thread.getAllStackTraces().entrySet().stream()
            .filter(thread -> Arrays.stream(thread.getValue()).anyMatch(frame -> frame.getClassName()
                .equals(ZookeeperLockStore.class.getName()) && frame.getMethodName().equals(method)))
            .map(thread -> thread.getKey().getName());
    }

    /**
     * The release's delete goes to a frozen server and its answer is lost with the connection;
     * Curator resends it after the reconnect and the resend finds the node gone. A session timeout
     * of its own, long enough that a reconnect is not taken for an expiry: a reconnect attempt
     * made while the server was still frozen can hang for its read timeout (two thirds of the
     * session timeout), so the test closes such an attempt's socket again until connected.
     */
    @Test
    void aReleaseWhoseDeleteIsResentAfterAConnectionLossIsAReleaseNotALoss() throws Exception {
        String key = "resent-" + UUID.randomUUID();
        CuratorFramework ownClient = ZookeeperTestClients.started(zookeeper.ensemble(), 15_000);
        try (ZookeeperLockRegistry own = ZookeeperLockRegistry.builder(ownClient).namespace("/orphans")
            .ownerIdentity("resending").description(zookeeper.ensemble().toString()).build()) {
            BackgroundHolder holder = BackgroundHolder.hold(own.obtain(key, true), WAIT, "resent-release-holder");
            zookeeper.ensemble().member(0).pause();
            try {
                holder.release();
                // The delete is sent to the frozen server; its answer is lost with the connection.
                await().atMost(WAIT).until(() -> holder.isIn(ZookeeperEntry.class, "release"));
                // Handed to the client's send queue before the holder blocked: give the client a moment to write it.
                Thread.sleep(200);
                ownClient.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
            }
            finally {
                zookeeper.ensemble().member(0).resume();
            }
            await().atMost(WAIT).pollInterval(Duration.ofMillis(700)).until(() -> {
                if (ownClient.getZookeeperClient().isConnected()) {
                    return true;
                }
                ownClient.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
                return false;
            });
            holder.released().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(own.describeLock(key, 10).holder()).isNull();
        }
        finally {
            ownClient.close();
        }
    }

    /**
     * A holder's watch on its own node is placed a moment into the hold; placed while the
     * connection is cut, it fails for good once Curator's retries run out (a connection loss).
     * Placed again once the client is connected (the session lived on), it tells the holder of a
     * deletion of its node at once, not only at its release.
     */
    @Test
    void aHolderWhoseOwnNodeWatchFailedWithTheConnectionStillNoticesItsNodeDeleted() throws Exception {
        String key = "unwatched-" + UUID.randomUUID();
        try (TcpProxy proxy = TcpProxy.start("http://" + zookeeper.ensemble().member(0).address())) {
            // A connection loss reported after a second; a session that outlives the cut (ZooKeeper grants at most
            // 10 s here: a contact budget of 5 s).
            CuratorFramework cutClient = CuratorFrameworkFactory.newClient("127.0.0.1:" + proxy.port(), 20_000, 1_000,
                    new RetryNTimes(1, 100));
            cutClient.start();
            try (ZookeeperLockRegistry cut = ZookeeperLockRegistry.builder(cutClient).namespace("/orphans")
                .ownerIdentity("cut").description("ZooKeeper through a proxy").build()) {
                assertThat(cutClient.blockUntilConnected(30, TimeUnit.SECONDS)).as("connected").isTrue();
                cut.connect().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                FencedLock held = cut.obtain(key, true);
                held.lock();
                // Cut before the watch is placed (100 ms into the hold), for longer than Curator retries it.
                proxy.reset();
                Thread.sleep(2_500);
                proxy.restore();
                await().atMost(WAIT).until(() -> cutClient.getZookeeperClient().isConnected());
                assertThat(held.isLockedByCurrentThread()).as("held after the cut").isTrue();

                String lockNode = cut.keyspace().lockNode(key);
                List<String> entries = client.getChildren().forPath(lockNode);
                assertThat(entries).hasSize(1);
                long deletedAt = System.nanoTime();
                client.delete().forPath(lockNode + "/" + entries.get(0));
                await().atMost(WAIT).pollInSameThread().pollInterval(Duration.ofMillis(10))
                    .until(() -> !held.isLockedByCurrentThread());
                Duration noticedAfter = Duration.ofNanos(System.nanoTime() - deletedAt);
                System.out.printf("[zookeeper own-node watch] deletion noticed %d ms after it%n", noticedAfter.toMillis());
                assertThat(noticedAfter).as("deletion noticed after").isLessThan(Duration.ofSeconds(2));
                assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock);
            }
            finally {
                cutClient.close();
            }
        }
    }

    /** @return the path of a new entry of {@link #registry}'s session that the registry knows nothing of */
    private static String plantOrphan(String key) throws Exception {
        return client.create().creatingParentContainersIfNeeded().withProtection()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .forPath(registry.keyspace().entryPath(key, registry.entryTag()), EntryValue.encode("registry", "a-lost-create", System.currentTimeMillis())
                .getBytes(StandardCharsets.UTF_8));
    }
}
