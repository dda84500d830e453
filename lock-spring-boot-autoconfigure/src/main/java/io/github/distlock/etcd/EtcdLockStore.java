package io.github.distlock.etcd;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * The etcd {@link LockStore}: one session lease per registry ({@link SessionKeeper}), one queue of
 * entries per key ({@link QueueEntry}, the protocol of etcd's {@code concurrency.Mutex}), one watch
 * stream per registry ({@link WatchDispatcher}), clean-up in one place ({@link EntryCleanup}) and
 * one reader of queues ({@link LockInspector}).
 *
 * <p>Two threads: {@code distlock-etcd-session} runs only session timing (keep-alives, expiry
 * checks), which never blocks, so that nothing else can delay a keep-alive;
 * {@code distlock-etcd-maintenance} runs background deletes, ghost sweeps, watch probes and hold
 * verifications, which call into jetcd.
 */
final class EtcdLockStore implements LockStore {

    /**
     * The longest lock root (in bytes) this store writes: 200 KiB. An entry's write carries it seven
     * times (the entry's key in the compare, the put and the read of the other branch, and the
     * queue's range in both branches), and must stay within etcd's default request limit of 1.5 MiB
     * ({@code --max-request-bytes}) with room for the entry's value; a queue read answers with up to
     * sixteen entries, within gRPC's default 4 MiB for an answer.
     */
    private static final long MAX_ROOT_BYTES = 200 * 1024;

    private final Client client;

    private final EtcdKeyspace keyspace;

    private final String ownerIdentity;

    private final String endpoints;

    private final long requestTimeoutNanos;

    private final long leaseTtlNanos;

    private final ScheduledExecutorService sessionScheduler;

    private final ScheduledExecutorService maintenance;

    /** Runs {@link #connect()}: a connect waits up to a request timeout, never on the JVM's common pool. */
    private final ExecutorService connector;

    private final WatchDispatcher dispatcher;

    private final EntryCleanup cleanup;

    private final SessionKeeper sessions;

    private final BackendFailures failures;

    private final LockInspector inspector;

    private final RaftTerms terms = new RaftTerms();

    private final EntrySlots slots = new EntrySlots();

    private final HoldLossListener lossListener;

    private volatile boolean closed;

    EtcdLockStore(Client client, EtcdKeyspace keyspace, Duration leaseTtl, Duration requestTimeout,
            String ownerIdentity, String endpoints, StoreEvents statistics, HoldLossListener lossListener) {
        this.client = client;
        this.keyspace = keyspace;
        this.ownerIdentity = ownerIdentity;
        this.endpoints = endpoints;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.leaseTtlNanos = leaseTtl.toNanos();
        this.lossListener = lossListener;
        this.sessionScheduler = singleThread("distlock-etcd-session");
        this.maintenance = singleThread("distlock-etcd-maintenance");
        this.connector = Executors.newCachedThreadPool(DaemonThreads.numbered("distlock-etcd-connect"));
        this.dispatcher = new WatchDispatcher(client.getWatchClient(), keyspace, this.maintenance,
                watchProbeNanos(this.requestTimeoutNanos));
        this.failures = new BackendFailures(statistics, ChannelReconnect.of(client));
        this.inspector = new LockInspector(client, keyspace, this.requestTimeoutNanos, endpoints);
        this.sessions = new SessionKeeper(client, leaseTtl.getSeconds(), this.requestTimeoutNanos,
                this.sessionScheduler, this.terms, statistics, this.failures);
        this.cleanup = new EntryCleanup(client, keyspace, this.sessions, this.maintenance, this.requestTimeoutNanos,
                this.failures);
    }

    private static ScheduledExecutorService singleThread(String name) {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, DaemonThreads.named(name));
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    // ---- LockStore -----------------------------------------------------------------------------

    @Override
    public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException {
        EtcdSession session;
        try {
            session = this.sessions.current(attempt);
        }
        catch (StoreUnavailableException ex) {
            this.failures.record();
            throw ex;
        }
        ByteSequence value = EtcdKeyspace.bytes(EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(),
                System.currentTimeMillis()));
        QueueEntry entry = new QueueEntry(this, key, this.keyspace.root(key), value, session);
        // Before its key is written: see the invariant of SessionKeeper.
        this.sessions.register(entry);
        return entry;
    }

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        return this.inspector.describe(key, maxEntries, withLeases);
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        return this.inspector.describeAll(maxEntries);
    }

    @Override
    public String namespace() {
        return this.keyspace.namespace();
    }

    /** @return the bytes of the key's root, {@code <namespace>#<escaped key>/} */
    @Override
    public long keySize(String key) {
        return this.keyspace.rootSize(key);
    }

    @Override
    public long maxKeySize() {
        return MAX_ROOT_BYTES;
    }

    @Override
    public long requestTimeoutNanos() {
        return this.requestTimeoutNanos;
    }

    @Override
    public boolean isSessionAlive() {
        EtcdSession current = this.sessions.currentOrNull();
        return current != null && current.isAlive();
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        EtcdSession current = this.sessions.currentOrNull();
        return (current != null) ? current.sinceLastRenewal() : null;
    }

    @Override
    public String describe() {
        return "etcd at " + this.endpoints;
    }

    @Override
    public void checkOpen() {
        if (this.closed) {
            throw new IllegalStateException("EtcdLockRegistry for namespace '" + this.keyspace.namespace()
                    + "' is closed");
        }
    }

    @Override
    public boolean isClosed() {
        return this.closed;
    }

    // ---- registry operations -------------------------------------------------------------------

    /** Grants the session lease and opens the watch stream. */
    @Override
    public CompletableFuture<Void> connect() {
        return StoreCalls.connect(this, this.connector, "etcd at " + this.endpoints, () -> {
            checkOpen();
            Wait wait = Wait.timeout(this.requestTimeoutNanos, false);
            try {
                this.sessions.current(wait);
                EtcdCalls.await(this.dispatcher.ensureOpen(), wait, "watch creation");
            }
            catch (StoreUnavailableException ex) {
                this.failures.record();
                throw ex;
            }
        });
    }

    @Nullable Duration grantedTtl() {
        return this.sessions.grantedTtl();
    }

    /** Revokes the lease, which deletes every entry of this store in etcd. Idempotent. */
    @Override
    public void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        this.sessions.close("the lock registry was closed");
        this.dispatcher.close();
        this.sessionScheduler.shutdownNow();
        this.maintenance.shutdownNow();
        this.connector.shutdownNow();
    }

    // ---- what queue entries share --------------------------------------------------------------

    /** Runs {@code task} on the maintenance thread after {@code delayNanos}; nothing once the store closed. */
    void schedule(Runnable task, long delayNanos) {
        try {
            this.maintenance.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed: the lease revoke ends every entry.
        }
    }

    /** An etcd call of an entry failed. */
    void failed() {
        this.failures.record();
    }

    EntrySlots slots() {
        return this.slots;
    }

    /** Raft terms seen in answers, so the session can spot keep-alives from a deposed leader. */
    RaftTerms terms() {
        return this.terms;
    }

    KV kv() {
        return this.client.getKVClient();
    }

    WatchDispatcher dispatcher() {
        return this.dispatcher;
    }

    EntryCleanup cleanup() {
        return this.cleanup;
    }

    /** How long a waiter trusts the watch alone before re-reading the queue anyway: one lease TTL. */
    long safetyRecheckNanos() {
        return this.leaseTtlNanos;
    }

    /**
     * The bound on one attempt of a call that may be sent again (a release with its compare, a
     * queue read, a background delete): a twentieth of the request timeout, between 200 ms and 1 s.
     * A member whose leader died holds a proposal until etcd's own timeout, several seconds, while
     * the cluster elects a new leader in about one election timeout (1 s by default): an attempt
     * sent again after the election is served at once, on the same member or, round robin,
     * another.
     */
    long idempotentAttemptNanos() {
        return idempotentAttemptNanos(this.requestTimeoutNanos);
    }

    /**
     * How long the watch stream may stay silent while someone waits before it is asked for
     * progress, and then has to answer: a fifth of the request timeout, between 500 ms and the
     * request timeout. A stream on a frozen member would otherwise leave its waiters deaf to
     * handoffs until gRPC's keep-alive gives up on the connection.
     */
    static long watchProbeNanos(long requestTimeoutNanos) {
        return Math.min(requestTimeoutNanos, Math.max(TimeUnit.MILLISECONDS.toNanos(500), requestTimeoutNanos / 5));
    }

    static long idempotentAttemptNanos(long requestTimeoutNanos) {
        long twentieth = requestTimeoutNanos / 20;
        return Math.min(requestTimeoutNanos,
                Math.max(TimeUnit.MILLISECONDS.toNanos(200), Math.min(twentieth, TimeUnit.SECONDS.toNanos(1))));
    }

    void holdLost(QueueEntry entry, String reason) {
        this.lossListener.holdLost(entry, reason);
    }

    /** The entry gave up or was released: it no longer owns a key under the session lease. */
    void forget(QueueEntry entry) {
        this.sessions.unregister(entry);
    }

    // ---- for tests -----------------------------------------------------------------------------

    SessionKeeper sessions() {
        return this.sessions;
    }

    /** Sweeps the session lease for ghost entries for a while; see {@link EntryCleanup}. */
    void sweepForGhosts() {
        this.cleanup.sweepForGhosts();
    }

    EtcdKeyspace keyspace() {
        return this.keyspace;
    }

    void runOnMaintenanceThread(Runnable task) {
        this.maintenance.execute(task);
    }

    void runOnSessionThread(Runnable task) {
        this.sessionScheduler.execute(task);
    }
}
