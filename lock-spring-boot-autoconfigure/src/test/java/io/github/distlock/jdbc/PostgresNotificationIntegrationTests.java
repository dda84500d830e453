package io.github.distlock.jdbc;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.Delegation;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.PostgresServer;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PostgreSQL's notifications when the network between a registry and the database fails: they
 * keep waking waiters of other processes. One registry reaches the database through a proxy that
 * plays the network. The waiter polls only every minute (at least 45 s with jitter) and the
 * holder's session lasts two minutes (a waiter also looks when the holder's session would expire),
 * so only a notification can wake the waiter within the test's 30 s bound.
 */
@FaultInjectionTest
class PostgresNotificationIntegrationTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final String KEY = "order-42";

    private final List<JdbcLockRegistry> registries = new ArrayList<>();


    private TestDatabase database;

    private String prefix;

    private TcpProxy proxy;

    @BeforeEach
    void start() {
        this.database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
        this.prefix = "N" + UUID.randomUUID().toString().substring(0, 8).toUpperCase(java.util.Locale.ROOT) + "_";
        this.database.createTables(this.prefix);
        this.proxy = TcpProxy.start("http://" + this.database.serverAddress());
    }

    @AfterEach
    void stop() {
        this.registries.forEach(JdbcLockRegistry::close);
        if (this.proxy != null) {
            this.proxy.close();
        }
        this.database.close();
    }

    /** The LISTEN connection dies without either end being told (a NAT or firewall forgot it). */
    @Test
    void aListenConnectionThatDiedSilentlyIsReplacedAndReleasesWakeWaitersAgain() throws Exception {
        JdbcLockRegistry holder = holder(this.database.pool("holder"));
        HikariDataSource waiterPool = this.database.poolThrough(this.proxy, "waiter-through-proxy");
        JdbcLockRegistry waiter = waiter(waiterPool);
        assertThat(handOver(holder, waiter, holder, () -> { })).as("woken by a notification before the connection died")
            .isTrue();
        this.proxy.severOpenConnections();
        // Only the LISTEN connection is under test: the waiter's calls get new connections at once,
        // rather than each finding its severed one dead after a timeout (slow on a loaded machine).
        waiterPool.getHikariPoolMXBean().softEvictConnections();
        assertThat(handOver(holder, waiter, holder, () -> { })).as("woken by a notification after the connection died")
            .isTrue();
        assertThat(handOver(holder, waiter, holder, () -> { })).as("woken by a notification on the new connection")
            .isTrue();
    }

    /** The holder's release fails, and the entry is removed in the background once the database answers. */
    @Test
    void anEntryRemovedAfterItsReleaseFailedWakesTheNextWaiter() throws Exception {
        JdbcLockRegistry holder = holder(this.database.poolThrough(this.proxy, "holder-through-proxy"));
        JdbcLockRegistry waiter = waiter(this.database.pool("waiter"));
        assertThat(handOver(holder, waiter, waiter, this.proxy::reset)).as("woken once the entry was removed").isTrue();
    }

    /**
     * A waiter that gives up while it is the oldest entry of its key without knowing it (its process
     * missed the release's notification: LISTEN is refused there, and it polls every minute) removes
     * its entry: that removal wakes the waiter behind it, long before its poll would.
     */
    @Test
    void aWaiterThatGivesUpAtTheHeadOfTheQueueWakesTheNextWaiter() throws Exception {
        JdbcLockRegistry holder = holder(this.database.pool("holder"));
        JdbcLockRegistry deaf = registry(JdbcLockRegistry.builder(withoutNotifications(this.database.pool("deaf")))
            .ownerIdentity("deaf")
            .pollInterval(Duration.ofMinutes(1)));
        JdbcLockRegistry waiter = waiter(this.database.pool("waiter"));
        FencedLock held = holder.obtain(KEY);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // Long enough for the next waiter to queue behind it on a slow machine, short against the bound.
        CompletableFuture<Long> givesUp = BackgroundAcquirer.acquireAndRelease(deaf.obtain(KEY),
                Duration.ofSeconds(15));
        await().atMost(BOUND).until(() -> holder.describeLock(KEY, 10).waiters().size() == 1);
        CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(waiter.obtain(KEY), BOUND);
        await().atMost(BOUND).until(() -> holder.describeLock(KEY, 10).waiters().size() == 2);
        assertThat(givesUp).as("still waiting when the holder releases").isNotDone();
        held.unlock();
        assertThat(givesUp).as("never told it was next").failsWithin(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next).as("woken by the removal, not a poll").succeedsWithin(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A process that gave its session up while the database still counts it alive (here its
     * renewals fail, and the session's expiry in the database lies far ahead, as after renewals that
     * executed but whose answers never came back) deletes it with its entries: that deletion wakes
     * the waiter behind its entry, long before its poll or the session's expiry would.
     */
    @Test
    void aSessionItsProcessGaveUpIsDeletedAndWakesTheWaiterBehindItsEntry() throws Exception {
        AtomicBoolean renewalsFail = new AtomicBoolean();
        String renewal = "UPDATE " + this.prefix + "SESSION SET EXPIRES_AT";
        DataSource failingRenewals = JdbcProxies.connectionsCalling(this.database.pool("holder"), (method, args) -> {
            if (renewalsFail.get() && method.getName().equals("prepareStatement") && args != null
                    && args[0] instanceof String sql && sql.startsWith(renewal)) {
                throw new SQLException("renewals fail here");
            }
        });
        // Renews every 5 s: long enough for the waiter to queue before the session is given up.
        JdbcLockRegistry holder = registry(JdbcLockRegistry.builder(failingRenewals).ownerIdentity("holder")
            .leaseTtl(Duration.ofSeconds(15)));
        FencedLock held = holder.obtain(KEY);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        renewalsFail.set(true);
        this.database.execute("UPDATE " + this.prefix + "SESSION SET EXPIRES_AT = EXPIRES_AT + 600000 WHERE "
                + "SESSION_ID = '" + holder.sessionId() + "'");
        CompletableFuture<Long> waited = BackgroundAcquirer.acquireAndRelease(
                waiter(this.database.pool("waiter")).obtain(KEY), BOUND);
        await().atMost(BOUND).until(() -> holder.describeLock(KEY, 10).waiters().size() == 1);
        assertThat(holder.getStatistics().getSessionsLost()).as("queued before the session was given up").isZero();
        assertThat(waited).as("woken by the session's deletion")
            .succeedsWithin(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(holder.getStatistics().getSessionsLost()).isOne();
    }

    /**
     * A row of a session that no acquisition owns goes with the session when its registry closes
     * (as do rows whose write or removal had no answer yet): that deletion wakes the waiter behind
     * it, long before its poll or the session's expiry would.
     */
    @Test
    void anEntryNoAcquisitionOwnsDeletedWithItsSessionAtCloseWakesTheNextWaiter() throws Exception {
        JdbcLockRegistry owner = registry(JdbcLockRegistry.builder(this.database.pool("owner")).ownerIdentity("owner")
            .leaseTtl(Duration.ofMinutes(2)));
        insertEntryNoAcquisitionOwns(owner);
        CompletableFuture<Long> waited = BackgroundAcquirer.acquireAndRelease(
                waiter(this.database.pool("waiter")).obtain(KEY), BOUND);
        await().atMost(BOUND).until(() -> owner.describeLock(KEY, 10).waiters().size() == 1);
        owner.close();
        assertThat(waited).as("woken by the session's deletion")
            .succeedsWithin(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A row of a live session that no acquisition owns (a write that committed after its caller gave
     * up and after its removal found nothing) holds the key until the session's renewal, every 15 s
     * here, deletes it: that deletion wakes the waiter behind it, long before its poll or the
     * session's expiry would.
     */
    @Test
    void anEntryNoAcquisitionOwnsDeletedByTheRenewalWakesTheNextWaiter() throws Exception {
        JdbcLockRegistry owner = registry(JdbcLockRegistry.builder(this.database.pool("owner")).ownerIdentity("owner")
            .leaseTtl(Duration.ofSeconds(45)));
        insertEntryNoAcquisitionOwns(owner);
        FencedLock lock = waiter(this.database.pool("waiter")).obtain(KEY);
        assertThat(lock.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("woken once the row was deleted").isTrue();
        lock.unlock();
        assertThat(owner.getStatistics().getHoldsLost()).isZero();
    }

    /**
     * A release commits without waiting for its flush. A crash of the database right after one (its
     * background writers frozen, no synchronous commit since) brings the released row back, as a
     * row of the holder's live session that no acquisition owns: the holder's renewal deletes it,
     * which wakes the waiter behind it; the holder keeps its session and fences still grow.
     */
    @Test
    void aReleaseThatADatabaseCrashLostIsDeletedAgainByItsOwnersRenewal() throws Exception {
        // Renews every 10 s: not between the release and the crash, so nothing flushes the release.
        JdbcLockRegistry holder = registry(JdbcLockRegistry.builder(this.database.poolThrough(this.proxy,
                "holder-through-proxy")).ownerIdentity("holder").leaseTtl(Duration.ofSeconds(30)));
        FencedLock held = holder.obtain(KEY);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long fence = held.getFence();
        String session = holder.sessionId();
        PostgresServer server = (PostgresServer) this.database.server();
        server.pauseBackgroundWriters();
        held.unlock();
        // Until the test has seen the row back, the holder's renewals do not reach the database.
        this.proxy.reset();
        server.restart();
        assertThat(this.database.queryLong("SELECT COUNT(*) FROM " + this.prefix + "ENTRY"))
            .as("the released row, back after the crash").isEqualTo(1);
        this.proxy.restore();
        FencedLock next = waiter(this.database.pool("waiter")).obtain(KEY);
        assertThat(next.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("taken once the holder deleted the row")
            .isTrue();
        assertThat(next.getFence()).isGreaterThan(fence);
        next.unlock();
        // Deleted by the holder's renewal, not with its session (which a waiter may delete once expired).
        assertThat(holder.sessionId()).isEqualTo(session);
        assertThat(holder.getStatistics().getSessionsLost()).isZero();
    }

    /** A prefix in a schema of its own: its channel keeps the dot, and notifications still wake waiters. */
    @Test
    void aPrefixInASchemaOfItsOwnIsNotifiedToo() throws Exception {
        this.database.execute("CREATE SCHEMA IF NOT EXISTS LOCKS");
        String qualified = "LOCKS." + this.prefix;
        this.database.createTables(qualified);
        JdbcLockRegistry holder = registry(qualified, JdbcLockRegistry.builder(this.database.pool("holder"))
            .ownerIdentity("holder")
            .leaseTtl(Duration.ofMinutes(2)));
        JdbcLockRegistry waiter = registry(qualified, JdbcLockRegistry.builder(this.database.pool("waiter"))
            .ownerIdentity("waiter")
            .pollInterval(Duration.ofMinutes(1)));
        assertThat(handOver(holder, waiter, holder, () -> { })).as("woken by a notification").isTrue();
    }

    /**
     * While LISTEN is not in effect (not taken yet, being replaced, or failing as here), a release
     * wakes the waiters of its own process itself: no notification will.
     */
    @Test
    void withoutListenInEffectAReleaseWakesTheNextWaiterOfItsOwnProcess() throws Exception {
        DataSource listenFails = withoutNotifications(this.database.pool("no-listen"));
        // Polls every minute and looks again when its own session would expire, in two: neither within the bound.
        JdbcLockRegistry registry = registry(JdbcLockRegistry.builder(listenFails).ownerIdentity("waiter")
            .leaseTtl(Duration.ofMinutes(2))
            .pollInterval(Duration.ofMinutes(1)));
        // Fair: the second thread queues an entry of its own behind the first's, as another process would.
        FencedLock held = registry.obtain(KEY, true);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(registry.isListening()).isFalse();
        CompletableFuture<Long> waited = BackgroundAcquirer.acquireAndRelease(registry.obtain(KEY, true), BOUND);
        await().atMost(BOUND).until(() -> registry.describeLock(KEY, 10).waiters().size() == 1);
        held.unlock();
        assertThat(waited).as("woken by the release, not a poll")
            .succeedsWithin(2 * BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Writes a row of {@code owner}'s session for {@link #KEY} that no acquisition of it owns, as a
     * write that committed after its caller gave up and after its removal found nothing would be.
     */
    private void insertEntryNoAcquisitionOwns(JdbcLockRegistry owner) throws Exception {
        FencedLock warmUp = owner.obtain("warm-up");
        assertThat(warmUp.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        warmUp.unlock();
        String lockId = JdbcTables.lockId(KEY);
        this.database.execute("INSERT INTO " + this.prefix + "LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('" + lockId + "', '"
                + KEY + "')");
        this.database.execute("INSERT INTO " + this.prefix + "ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) "
                + "VALUES ('" + lockId + "', '" + owner.sessionId() + "', 999999, 'ghost')");
    }

    /** A pool whose connections refuse LISTEN (as a proxy in front of the database may), so it never takes effect. */
    private static DataSource withoutNotifications(DataSource pool) {
        return (DataSource) Proxy.newProxyInstance(PostgresNotificationIntegrationTests.class.getClassLoader(),
                new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
                    Object answer = Delegation.invoke(pool, method, args);
                    return (answer instanceof Connection connection) ? withoutNotifications(connection) : answer;
                });
    }

    /** A connection on which LISTEN fails (as on a proxy that refuses it), so it never takes effect. */
    private static Connection withoutNotifications(Connection connection) {
        return (Connection) Proxy.newProxyInstance(PostgresNotificationIntegrationTests.class.getClassLoader(),
                new Class<?>[] { Connection.class }, (proxy, method, args) -> {
                    Object answer = Delegation.invoke(connection, method, args);
                    if (!method.getName().equals("createStatement") || !(answer instanceof Statement statement)) {
                        return answer;
                    }
                    return Proxy.newProxyInstance(PostgresNotificationIntegrationTests.class.getClassLoader(),
                            new Class<?>[] { Statement.class }, (statementProxy, call, callArgs) -> {
                                if (callArgs != null && callArgs.length > 0 && callArgs[0] instanceof String sql
                                        && sql.startsWith("LISTEN")) {
                                    throw new SQLException("LISTEN is refused here");
                                }
                                return Delegation.invoke(statement, call, callArgs);
                            });
                });
    }


    private JdbcLockRegistry holder(DataSource pool) {
        return registry(JdbcLockRegistry.builder(pool).ownerIdentity("holder").leaseTtl(Duration.ofMinutes(2)));
    }

    /**
     * @return a registry that polls every minute, once its LISTEN is in effect (when LISTEN takes
     * effect, every waiter reads its queue once: that read must not stand in for the notification
     * under test)
     */
    private JdbcLockRegistry waiter(DataSource pool) throws Exception {
        JdbcLockRegistry waiter = registry(JdbcLockRegistry.builder(pool).ownerIdentity("waiter")
            .pollInterval(Duration.ofMinutes(1)));
        waiter.connect().get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        await().atMost(BOUND).until(waiter::isListening);
        return waiter;
    }

    private JdbcLockRegistry registry(JdbcLockRegistry.Builder builder) {
        return registry(this.prefix, builder);
    }

    private JdbcLockRegistry registry(String tablePrefix, JdbcLockRegistry.Builder builder) {
        JdbcLockRegistry registry = builder.tablePrefix(tablePrefix).requestTimeout(Duration.ofSeconds(2)).build();
        this.registries.add(registry);
        return registry;
    }

    /**
     * The holder takes the key, the waiter queues, {@code beforeRelease} runs, the holder releases
     * and the network is restored.
     * @param direct whichever of the two reaches the database without the proxy, to see the queue
     * @return whether the waiter got the key within the bound
     */
    private boolean handOver(JdbcLockRegistry holder, JdbcLockRegistry waiter, JdbcLockRegistry direct,
            Runnable beforeRelease) throws Exception {
        FencedLock held = holder.obtain(KEY);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> {
            FencedLock lock = waiter.obtain(KEY);
            try {
                if (!lock.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    return false;
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
            lock.unlock();
            return true;
        });
        await().atMost(BOUND).until(() -> direct.describeLock(KEY, 10).waiters().size() == 1);
        beforeRelease.run();
        held.unlock();
        this.proxy.restore();
        return waited.get(2 * BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }
}
