package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockKeys;
import io.github.distlock.store.LockListing;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper {@link LockStore} on an application's Curator client: entries are ephemeral
 * sequential nodes of the client's session ({@link ZookeeperEntry}), so a crashed process's entries
 * vanish when ZooKeeper expires its session.
 *
 * <p>Session semantics (invariant: no hold outlives what ZooKeeper may have expired): holds are
 * reported lost half a session timeout after the last sync the leader answered was sent (see
 * {@link ZookeeperSession#contactBudgetNanos()}), suspended or not; a new session (after expiry)
 * loses every hold of the old one at once.
 *
 * <p>Entries no acquisition answers for (see {@link EntrySweeper}): entry names carry this
 * store's tag; a tagged node that is not owned, seen while no create of its lock is pending, is
 * deleted, by a waiter reading its queue and by the maintenance thread on suspect locks (a create
 * that failed, spanned a connection change or was never answered; a delete never answered).
 */
final class ZookeeperLockStore implements LockStore {

    private static final Logger logger = LoggerFactory.getLogger(ZookeeperLockStore.class);

    private static final long SWEEP_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Pause before a call that failed while the client was connected is made again; see {@link #whenConnected}. */
    private static final long CONNECTED_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * A listing asks for this many lock queues, or entries of a lock, at once: pipelined, without
     * queueing a request for every key or entry.
     */
    private static final int QUEUE_READS_AT_ONCE = 1000;

    /**
     * The longest lock node path (in UTF-8 bytes) this store sends: half of {@code jute.maxbuffer}
     * (which servers and clients must set alike; 1 MiB - 1 by default). A server drops the connection
     * of a request over {@code jute.maxbuffer}, the connection every hold of the client shares, and
     * Curator resends the request on every reconnection. Besides the path, a create carries the entry's
     * name and value, and a reconnecting client resends the paths it watches in batches of up to 128 K
     * characters plus one path.
     */
    private static final long MAX_LOCK_NODE_BYTES = Integer.getInteger(ZKConfig.JUTE_MAXBUFFER,
            ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT) / 2;

    private final CuratorFramework client;

    private final ZookeeperKeyspace keyspace;

    private final long requestTimeoutNanos;

    private final String ownerIdentity;

    private final String where;

    private final StoreEvents statistics;

    private final HoldLossListener losses;

    private final ScheduledExecutorService maintenance;

    /** Runs {@link #connect()}'s waits, which can take a request timeout each. */
    private final ExecutorService connector;

    private final ReentrantLock sessionStart = new ReentrantLock();

    private final ConnectionStateListener connectionStates = (client, state) -> stateChanged(state);

    /** Finds this store's entries that no acquisition answers for. */
    private final EntrySweeper sweeper;

    /**
     * Counts connection events: those ZooKeeper delivers on its event thread, in order with the
     * answers to calls (when the client lets us listen there), and Curator's state changes.
     */
    private final AtomicLong connectionChanges = new AtomicLong();

    private final CuratorListener connectionEvents = (client, event) -> {
        if (event.getType() == CuratorEventType.WATCHED && event.getWatchedEvent() != null
                && event.getWatchedEvent().getType() == Watcher.Event.EventType.None) {
            this.connectionChanges.incrementAndGet();
        }
    };

    private final boolean listensToConnectionEvents;

    /** Calls that failed for want of a connection, made again once the client is connected; see {@link #whenConnected}. */
    private final Queue<Runnable> awaitingConnection = new ConcurrentLinkedQueue<>();

    private volatile @Nullable ZookeeperSession session;

    private volatile long lastContactAt;

    private volatile boolean closed;

    /** The session timeout the client asked for, if known; see {@link #expectSessionTimeout}. */
    private volatile @Nullable Duration requestedSessionTimeout;

    private final AtomicBoolean grantedTimeoutReported = new AtomicBoolean();

    ZookeeperLockStore(CuratorFramework client, ZookeeperKeyspace keyspace, Duration requestTimeout,
            String ownerIdentity, String where, StoreEvents statistics, HoldLossListener losses) {
        this.client = client;
        this.keyspace = keyspace;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.ownerIdentity = ownerIdentity;
        this.where = where;
        this.statistics = statistics;
        this.losses = losses;
        this.maintenance = Executors
            .newSingleThreadScheduledExecutor(DaemonThreads.named("distlock-zookeeper-maintenance"));
        this.connector = Executors.newCachedThreadPool(DaemonThreads.numbered("distlock-zookeeper-connect"));
        byte[] random = new byte[6];
        new SecureRandom().nextBytes(random);
        // Beyond every wait on a call: an acquisition's (one request timeout) and a release's.
        this.sweeper = new EntrySweeper(HexFormat.of().formatHex(random), 2 * this.requestTimeoutNanos);
        client.getConnectionStateListenable().addListener(this.connectionStates);
        this.listensToConnectionEvents = listenToConnectionEvents(client);
        this.maintenance.scheduleWithFixedDelay(this::sweepSuspectLocks, SWEEP_PERIOD_NANOS, SWEEP_PERIOD_NANOS,
                TimeUnit.NANOSECONDS);
    }

    /** @return false on a namespace facade, which offers no listener of ZooKeeper's own events */
    private boolean listenToConnectionEvents(CuratorFramework curator) {
        try {
            curator.getCuratorListenable().addListener(this.connectionEvents);
            return true;
        }
        catch (UnsupportedOperationException ex) {
            return false;
        }
    }

    /** @return a count that changes with every connection loss and reconnection */
    long connectionChanges() {
        return this.connectionChanges.get();
    }

    // ---- session -------------------------------------------------------------------------------

    @Override
    public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException {
        checkOpen();
        ZookeeperSession current = liveSession(attempt);
        String value = EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(),
                System.currentTimeMillis());
        return new ZookeeperEntry(this, current, key, value.getBytes(StandardCharsets.UTF_8));
    }

    private ZookeeperSession liveSession(Wait attempt) throws StoreUnavailableException, InterruptedException {
        Wait bound = attempt.atMost(this.requestTimeoutNanos);
        boolean connected = bound.block(remaining -> this.client.blockUntilConnected(
                (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(remaining, this.requestTimeoutNanos))),
                TimeUnit.MILLISECONDS));
        if (!connected) {
            throw new StoreUnavailableException("No connection to " + this.where + " within the request timeout", null);
        }
        if (!bound.lock(this.sessionStart)) {
            throw new StoreUnavailableException("Starting a session on " + this.where + " took too long", null);
        }
        try {
            // Closed while this waited: a session started now would outlive the close.
            checkOpen();
            long id;
            long timeout;
            try {
                id = this.client.getZookeeperClient().getZooKeeper().getSessionId();
                timeout = this.client.getZookeeperClient().getZooKeeper().getSessionTimeout();
            }
            catch (Exception ex) {
                throw new StoreUnavailableException("No ZooKeeper session: " + ex.getMessage(), ex);
            }
            ZookeeperSession current = this.session;
            if (current != null && current.id == id && current.lostReason() == null) {
                return current;
            }
            if (current != null) {
                loseSession(current, "ZooKeeper session " + current.describe() + " ended");
            }
            reportGrantedTimeout(timeout);
            ZookeeperSession started = new ZookeeperSession(id, timeout);
            // The sync's answer proves contact, counted from when it was sent; the read behind it (in
            // the same round trip) proves access: a wrong identity fails here, with NOAUTH.
            long sentAt = System.nanoTime();
            CompletableFuture<CuratorEvent> synced = sync();
            CompletableFuture<CuratorEvent> read = background(callback -> this.client.checkExists()
                .inBackground(callback).forPath(this.keyspace.namespace()));
            await(synced, bound, "Starting a session", KeeperException.Code.NONODE);
            await(read, bound, "Starting a session", KeeperException.Code.NONODE);
            contact(sentAt);
            this.session = started;
            // Written before reading closed, as close() writes closed before reading the session: one sees the other.
            if (this.closed) {
                loseSession(started, "the lock registry was closed");
                checkOpen();
            }
            schedulePing(started);
            return started;
        }
        finally {
            this.sessionStart.unlock();
        }
    }

    /**
     * Every {@link ZookeeperSession#pingIntervalNanos() ping interval}, a sync whose answer proves
     * that the leader was reachable after it was sent. Not a read: a follower cut off from the
     * leader answers reads (and the client's own pings) for syncLimit ticks, while the leader,
     * which that follower no longer tells of the session, may expire it after one timeout.
     */
    private void schedulePing(ZookeeperSession pinged) {
        if (this.maintenance.isShutdown() || pinged.lostReason() != null) {
            return;
        }
        this.maintenance.schedule(() -> {
            if (pinged != this.session || pinged.lostReason() != null) {
                return;
            }
            checkContact(pinged);
            long sentAt = System.nanoTime();
            sync().thenAccept(event -> {
                int code = event.getResultCode();
                // Curator resends a sync lost with a connection, possibly on the client's next session:
                // an answer there says nothing of this one.
                if ((code == KeeperException.Code.OK.intValue() || code == KeeperException.Code.NONODE.intValue())
                        && isClientsSession(pinged)) {
                    contact(sentAt);
                }
            });
            schedulePing(pinged);
        }, pinged.pingIntervalNanos(), TimeUnit.NANOSECONDS);
    }

    /** A sync of the namespace: answered once the client's server has heard from the leader since it was sent. */
    private CompletableFuture<CuratorEvent> sync() {
        return background(callback -> this.client.sync().inBackground(callback).forPath(this.keyspace.namespace()));
    }

    private void contact(long sentAt) {
        if (sentAt - this.lastContactAt > 0) {
            this.lastContactAt = sentAt;
        }
    }

    /**
     * Loses the session if no sync proved contact with the leader within its
     * {@link ZookeeperSession#contactBudgetNanos() budget}: what a process that was paused, or whose
     * server was cut off from the leader, finds first, before its other threads notice anything.
     * @return whether the session is (now) lost
     */
    boolean checkContact(ZookeeperSession checked) {
        if (checked.lostReason() == null && System.nanoTime() - this.lastContactAt >= checked.contactBudgetNanos()) {
            loseSession(checked, "no answer from the ZooKeeper leader for "
                    + TimeUnit.NANOSECONDS.toMillis(checked.contactBudgetNanos()) + " ms (session timeout "
                    + checked.timeoutMillis + " ms); the session may have expired");
        }
        return checked.lostReason() != null;
    }

    private void stateChanged(ConnectionState state) {
        this.connectionChanges.incrementAndGet();
        ZookeeperSession current = this.session;
        switch (state) {
            // SUSPENDED ends nothing: the contact budget ends the session in time whatever the states
            // say, and a RECONNECTED told late (Curator queues states) must not end a session that lived on.
            case RECONNECTED, CONNECTED -> {
                if (current != null) {
                    try {
                        if (this.client.getZookeeperClient().getZooKeeper().getSessionId() != current.id) {
                            loseSession(current, "ZooKeeper expired session " + current.describe());
                        }
                    }
                    catch (Exception ex) {
                        loseSession(current, "no ZooKeeper session: " + ex.getMessage());
                    }
                }
                runLater(0, this::runAwaitingConnection);
            }
            case LOST -> {
                // Told late (Curator queues states): an acquisition may have started the next session on the
                // reconnected client meanwhile. A session the client is connected on is not the one that ended.
                if (current != null && !isConnectedOn(current)) {
                    loseSession(current, "ZooKeeper session " + current.describe() + " lost (expired)");
                }
            }
            default -> {
            }
        }
    }

    /** @return whether the client is connected, on {@code session} */
    private boolean isConnectedOn(ZookeeperSession session) {
        return this.client.getZookeeperClient().isConnected() && isClientsSession(session);
    }

    /** @return whether {@code session} is the session of the client's current handle (false if Curator would not say) */
    private boolean isClientsSession(ZookeeperSession session) {
        try {
            return this.client.getZookeeperClient().getZooKeeper().getSessionId() == session.id;
        }
        catch (Exception ex) {
            return false;
        }
    }

    private void loseSession(ZookeeperSession lost, String reason) {
        if (!lost.lose(reason)) {
            return;
        }
        if (!this.closed) {
            this.statistics.sessionLost();
            logger.warn("ZooKeeper lock session {} on {} ended: {}; its locks are lost", lost.describe(), this.where,
                    reason);
        }
        for (ZookeeperEntry entry : lost.entries) {
            entry.lose(reason, true);
        }
    }

    void holdLost(ZookeeperEntry entry, String reason) {
        this.losses.holdLost(entry, reason);
    }

    void failed(Exception ex) {
        this.statistics.backendError();
        logger.debug("ZooKeeper call failed: {}", ex.getMessage());
    }

    // ---- calls ---------------------------------------------------------------------------------

    /** A Curator operation run in the background, whose event completes the returned future. */
    @FunctionalInterface
    interface BackgroundOperation {

        void start(BackgroundCallback callback) throws Exception;
    }

    /** @return completes with the operation's event, or exceptionally if it could not start */
    CompletableFuture<CuratorEvent> background(BackgroundOperation operation) {
        CompletableFuture<CuratorEvent> done = new CompletableFuture<>();
        try {
            operation.start((client, event) -> done.complete(event));
        }
        catch (Exception ex) {
            done.completeExceptionally(ex);
        }
        return done;
    }

    /**
     * Waits for a background operation within {@code wait}, and turns a ZooKeeper error into an
     * exception; the codes in {@code accepted} are answers, not failures. A wait that ends early
     * (timeout, interrupt) leaves {@code operation} to complete: what depends on it (the sweeper's
     * bookkeeping, the deletion of a late create's node) must still run.
     */
    CuratorEvent await(CompletableFuture<CuratorEvent> operation, Wait wait, String what, KeeperException.Code... accepted)
            throws StoreUnavailableException, InterruptedException {
        CuratorEvent event = StoreCalls.await(operation.copy(), wait, what + " on " + this.where);
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.OK) {
            return event;
        }
        for (KeeperException.Code answer : accepted) {
            if (code == answer) {
                return event;
            }
        }
        throw new StoreUnavailableException(what + " failed on " + this.where + ": " + code, null);
    }

    /**
     * Creates an entry node of this store (protected, so a create whose answer was lost is found
     * rather than repeated when Curator retries it).
     * @return completes with the create's event once its node, if any, is owned
     */
    CompletableFuture<CuratorEvent> createEntry(String key, byte[] value, Stat stat) {
        long token = this.sweeper.createStarted(key);
        long changesAtStart = this.connectionChanges.get();
        return background(callback -> this.client.create()
            .storingStatIn(stat)
            .creatingParentContainersIfNeeded()
            .withProtection()
            .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
            .inBackground(callback)
            .forPath(this.keyspace.entryPath(key, this.sweeper.tag()), value)).whenComplete((event, failure) -> {
                String created = (event != null && event.getResultCode() == KeeperException.Code.OK.intValue())
                        ? event.getName() : null;
                this.sweeper.createEnded(token, key, created, (event != null && created == null)
                        || this.connectionChanges.get() != changesAtStart);
            });
    }

    /**
     * Runs {@code task} on the maintenance thread once the client is connected: at the next
     * connection or reconnection, or after {@link #CONNECTED_RETRY_NANOS} if it is connected now
     * (the call failed for another reason, or the connection came back before this was asked;
     * either way no busy loop).
     */
    void whenConnected(Runnable task) {
        this.awaitingConnection.add(task);
        // After adding: a reconnection told before this either sees the task or set the client connected already.
        if (this.client.getZookeeperClient().isConnected()) {
            runLater(CONNECTED_RETRY_NANOS, this::runAwaitingConnection);
        }
    }

    private void runAwaitingConnection() {
        Runnable task;
        while ((task = this.awaitingConnection.poll()) != null) {
            try {
                task.run();
            }
            catch (RuntimeException ex) {
                logger.debug("A call made again once connected failed: {}", ex.toString());
            }
        }
    }

    /** Runs {@code task} on the maintenance thread after {@code delayNanos}; it must not block. */
    void runLater(long delayNanos, Runnable task) {
        try {
            this.maintenance.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed: every entry was deleted and has ended.
        }
    }

    /** The acquisition stopped waiting for its create's answer: whatever it created is for the sweeper. */
    void createUnanswered(String key) {
        this.sweeper.suspect(key);
    }

    /**
     * Deletes an entry node in the background until ZooKeeper confirms (Curator's guaranteed
     * delete, which retries while the session lives; an ephemeral node ends with its session).
     * @return completes when ZooKeeper confirmed (or the node was already gone)
     */
    CompletableFuture<CuratorEvent> deleteGuaranteed(String key, String path) {
        this.sweeper.deleteStarted(key, path);
        return background(callback -> this.client.delete().guaranteed().inBackground(callback).forPath(path))
            .whenComplete((event, failure) -> this.sweeper.deleteEnded(path));
    }

    /**
     * Deletes the entries of this store in a lock's queue that no acquisition answers for.
     * @param lockNode the lock's container node
     * @param entries the lock node's children, read before this call
     * @return how many were deleted
     */
    int sweepOrphans(String key, String lockNode, List<String> entries) {
        return this.sweeper.sweep(key, lockNode, entries, path -> deleteGuaranteed(key, path).thenAccept(event -> {
            // Told once ZooKeeper deleted it: a node that was gone already was nobody's to tell about.
            if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
                logger.warn("Deleted lock entry {} of this registry on {}: no acquisition answered for it (a "
                        + "connection loss took the answer to its create)", LockKeys.abbreviate(path), this.where);
            }
        }));
    }

    /** Expires calls left unanswered, and reads the queue of each suspect lock (without blocking this thread). */
    private void sweepSuspectLocks() {
        this.sweeper.expireStaleCalls();
        ZookeeperSession current = this.session;
        // A late create may still land a while after the connection change: keep looking until then.
        long settle = Math.max(this.requestTimeoutNanos,
                (current != null) ? TimeUnit.MILLISECONDS.toNanos(current.timeoutMillis) : 0);
        this.sweeper.sweepSuspects(settle, (key, done) -> {
            String lockNode = this.keyspace.lockNode(key);
            background(callback -> this.client.getChildren().inBackground(callback).forPath(lockNode))
                .whenComplete((event, failure) -> {
                    int code = (event != null) ? event.getResultCode() : KeeperException.Code.SYSTEMERROR.intValue();
                    boolean read = code == KeeperException.Code.OK.intValue()
                            || code == KeeperException.Code.NONODE.intValue();
                    done.accept(read && !this.sweeper.isCreatePending(key)
                            && sweepOrphans(key, lockNode, sortedEntries(event.getChildren())) == 0);
                });
        });
    }

    boolean isCreateInFlight(String key) {
        return this.sweeper.isCreatePending(key);
    }

    /** @return this store's mark in its entries' names */
    String tag() {
        return this.sweeper.tag();
    }

    /**
     * Deletes an entry node and waits briefly for the confirmation, so the next waiter is not behind
     * it; not past {@code attempt}, so an acquisition returns within its wait (or, for a try-once,
     * its first attempt's bound).
     */
    void deleteBeforeReturning(String key, String path, Wait attempt) {
        CompletableFuture<CuratorEvent> deleted = deleteGuaranteed(key, path).copy();
        if (!StoreCalls.awaitGiveUpConfirmation(deleted, attempt, this.requestTimeoutNanos)) {
            logger.debug("Removal of lock entry {} not confirmed within the acquisition's bound; Curator goes on with "
                    + "it in the background", LockKeys.abbreviate(path));
        }
    }

    CuratorFramework client() {
        return this.client;
    }

    ZookeeperKeyspace keyspace() {
        return this.keyspace;
    }

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        try {
            return readLock(key, maxEntries, Wait.timeout(this.requestTimeoutNanos, false));
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read lock '" + LockKeys.abbreviate(key) + "' from " + this.where
                    + ": " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    private LockSnapshot readLock(String key, int maxEntries, Wait wait)
            throws StoreUnavailableException, InterruptedException {
        CuratorEvent children = await(readQueue(key), wait, reading(key), KeeperException.Code.NONODE);
        return readEntries(key, sortedEntries(children.getChildren()), maxEntries, wait);
    }

    private static String reading(String key) {
        return "Reading lock '" + LockKeys.abbreviate(key) + "'";
    }

    private CompletableFuture<CuratorEvent> readQueue(String key) {
        return background(callback -> this.client.getChildren().inBackground(callback)
            .forPath(this.keyspace.lockNode(key)));
    }

    /**
     * Reads the first {@code maxEntries} of {@code entries} that still exist, the reads of a batch
     * (up to {@link #QUEUE_READS_AT_ONCE}) sent at once: ZooKeeper answers requests pipelined on the
     * session's connection in order, so a long queue costs a round trip per batch, not per entry.
     * @param entries as {@link #sortedEntries} returns them
     */
    private LockSnapshot readEntries(String key, List<String> entries, int maxEntries, Wait wait)
            throws StoreUnavailableException, InterruptedException {
        String lockNode = this.keyspace.lockNode(key);
        int ordered = orderedBySequence(entries);
        List<LockSnapshot.Entry> read = new ArrayList<>();
        int next = 0;
        // Another batch only for entries deleted since the queue was read.
        while (read.size() < maxEntries && next < ordered) {
            int end = next + Math.min(Math.min(maxEntries - read.size(), ordered - next), QUEUE_READS_AT_ONCE);
            read.addAll(readBatch(key, lockNode, entries.subList(next, end), wait));
            next = end;
        }
        if (read.size() < maxEntries && ordered < entries.size()) {
            // Created after the lock node's counter wrapped: only their creation zxids (their fences) order them.
            List<LockSnapshot.Entry> wrapped = new ArrayList<>();
            for (int from = ordered; from < entries.size(); from += QUEUE_READS_AT_ONCE) {
                wrapped.addAll(readBatch(key, lockNode,
                        entries.subList(from, Math.min(entries.size(), from + QUEUE_READS_AT_ONCE)), wait));
            }
            wrapped.sort(Comparator.comparingLong(LockSnapshot.Entry::fence));
            read.addAll(wrapped.subList(0, Math.min(wrapped.size(), maxEntries - read.size())));
        }
        return read.isEmpty() ? new LockSnapshot(key, null, List.of())
                : new LockSnapshot(key, read.get(0), read.subList(1, read.size()));
    }

    /** Reads the entries of {@code children} that still exist, all requests sent at once. */
    private List<LockSnapshot.Entry> readBatch(String key, String lockNode, List<String> children, Wait wait)
            throws StoreUnavailableException, InterruptedException {
        List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>(children.size());
        for (String child : children) {
            reads.add(background(callback -> this.client.getData().inBackground(callback)
                .forPath(lockNode + "/" + child)));
        }
        List<LockSnapshot.Entry> read = new ArrayList<>(children.size());
        for (CompletableFuture<CuratorEvent> pending : reads) {
            CuratorEvent data = await(pending, wait, reading(key), KeeperException.Code.NONODE);
            Stat stat = data.getStat();
            if (stat == null || data.getData() == null) {
                continue;
            }
            EntryValue value = EntryValue.decode(new String(data.getData(), StandardCharsets.UTF_8));
            read.add(new LockSnapshot.Entry(value.owner(), value.thread(), stat.getCzxid(),
                    (value.queuedAt() != null) ? value.queuedAt() : Instant.ofEpochMilli(stat.getCtime()),
                    "0x" + Long.toHexString(stat.getEphemeralOwner()), null));
        }
        return read;
    }

    /**
     * @return the entry children in queue order as far as their names tell: those ordered by
     * sequence (the protection prefix comes before it) first, then those created after the lock
     * node's counter wrapped, by name; see {@link #inQueueOrder}
     */
    static List<String> sortedEntries(@Nullable List<String> children) {
        List<String> entries = new ArrayList<>();
        List<String> wrapped = new ArrayList<>();
        if (children != null) {
            for (String child : children) {
                if (ZookeeperKeyspace.isOrderedBySequence(child)) {
                    entries.add(child);
                }
                else if (ZookeeperKeyspace.sequenceOf(child) != ZookeeperKeyspace.NOT_AN_ENTRY) {
                    wrapped.add(child);
                }
            }
        }
        entries.sort(Comparator.comparingLong(ZookeeperKeyspace::sequenceOf));
        wrapped.sort(Comparator.naturalOrder());
        entries.addAll(wrapped);
        return entries;
    }

    /** @return how many of {@code sorted} (see {@link #sortedEntries}) come first, ordered by their sequence */
    private static int orderedBySequence(List<String> sorted) {
        int ordered = 0;
        while (ordered < sorted.size() && ZookeeperKeyspace.isOrderedBySequence(sorted.get(ordered))) {
            ordered++;
        }
        return ordered;
    }

    /**
     * Puts a lock's entries in queue order, the order they were created in, up to {@code own}: the
     * order of {@link #sortedEntries} for entries ordered by sequence, which are older than every
     * other; entries created after the lock node's counter wrapped are ordered by their creation
     * zxids, read (all at once) unless {@code own} is ordered by sequence, since they are behind it then.
     * @param sorted the entries, as {@link #sortedEntries} returns them
     * @param own the entry the caller asks about, one of {@code sorted}
     * @param ownCzxid its creation zxid
     * @return the entries in queue order up to {@code own} (those behind it in any order), without
     * those found deleted
     */
    List<String> inQueueOrder(String lockNode, List<String> sorted, String own, long ownCzxid, Wait wait)
            throws StoreUnavailableException, InterruptedException {
        int ordered = orderedBySequence(sorted);
        if (ordered == sorted.size() || ZookeeperKeyspace.isOrderedBySequence(own)) {
            return sorted;
        }
        Map<String, CompletableFuture<CuratorEvent>> reads = new LinkedHashMap<>();
        for (String child : sorted.subList(ordered, sorted.size())) {
            if (!child.equals(own)) {
                reads.put(child, background(callback -> this.client.checkExists().inBackground(callback)
                    .forPath(lockNode + "/" + child)));
            }
        }
        Map<String, Long> czxids = new LinkedHashMap<>();
        czxids.put(own, ownCzxid);
        for (Map.Entry<String, CompletableFuture<CuratorEvent>> read : reads.entrySet()) {
            Stat stat = await(read.getValue(), wait, "Reading the lock queue", KeeperException.Code.NONODE).getStat();
            if (stat != null) {
                czxids.put(read.getKey(), stat.getCzxid());
            }
        }
        List<String> queue = new ArrayList<>(sorted.subList(0, ordered));
        czxids.entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(entry -> queue.add(entry.getKey()));
        return queue;
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        try {
            Wait wait = Wait.timeout(this.requestTimeoutNanos, false);
            CuratorEvent children = await(background(callback -> this.client.getChildren().inBackground(callback)
                .forPath(this.keyspace.namespace())), wait, "Listing the locks", KeeperException.Code.NONODE);
            List<String> keys = new ArrayList<>();
            for (String child : (children.getChildren() != null) ? children.getChildren() : List.<String>of()) {
                String key = this.keyspace.lockKeyOf(child);
                if (key != null) {
                    keys.add(key);
                }
            }
            // The queues are asked for many at once: lock nodes outlive their last entry (until the
            // server's container check, a minute by default), so with many keys a read per lock after
            // another would outlast the request timeout.
            Map<String, List<String>> queues = new TreeMap<>();
            for (int from = 0; from < keys.size(); from += QUEUE_READS_AT_ONCE) {
                Map<String, CompletableFuture<CuratorEvent>> queueReads = new LinkedHashMap<>();
                for (String key : keys.subList(from, Math.min(keys.size(), from + QUEUE_READS_AT_ONCE))) {
                    queueReads.put(key, readQueue(key));
                }
                for (Map.Entry<String, CompletableFuture<CuratorEvent>> queueRead : queueReads.entrySet()) {
                    List<String> entries = sortedEntries(await(queueRead.getValue(), wait, "Listing the locks",
                            KeeperException.Code.NONODE).getChildren());
                    if (!entries.isEmpty()) {
                        queues.put(queueRead.getKey(), entries);
                    }
                }
            }
            return LockListing.list(this.keyspace.namespace(), queues.keySet(), maxEntries,
                    (key, max) -> readEntries(key, queues.get(key), max, wait));
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read the locks from " + this.where + ": " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    // ---- lifecycle -----------------------------------------------------------------------------

    /** The session timeout the client asked for: a different grant is then reported once. */
    void expectSessionTimeout(Duration requested) {
        this.requestedSessionTimeout = requested;
    }

    private void reportGrantedTimeout(long grantedMillis) {
        Duration requested = this.requestedSessionTimeout;
        if (requested == null || requested.toMillis() == grantedMillis
                || !this.grantedTimeoutReported.compareAndSet(false, true)) {
            return;
        }
        if (grantedMillis > requested.toMillis()) {
            // Raised to the server's least, two ticks by default: below the three the contact budget needs.
            logger.warn("{} granted a session timeout of {} ms instead of the {} ms asked for, likely its least "
                    + "(two ticks by default): a crashed holder's locks are freed after {} ms, and a holder whose server "
                    + "is cut off from the leader may outlive its session by up to half a tick; ask for at least three "
                    + "ticks ({} ms)", this.where, grantedMillis, requested.toMillis(), grantedMillis,
                    grantedMillis * 3 / 2);
        }
        else {
            logger.warn("{} granted a session timeout of {} ms instead of the {} ms asked for (ZooKeeper keeps it "
                    + "within 2 and 20 of its ticks by default): a crashed holder's locks are freed after {} ms",
                    this.where, grantedMillis, requested.toMillis(), grantedMillis);
        }
    }

    /** Waits for ZooKeeper on a connect thread: the maintenance thread's timers must not wait behind it. */
    @Override
    public CompletableFuture<Void> connect() {
        return StoreCalls.connect(this, this.connector, this.where, () -> {
            checkOpen();
            liveSession(Wait.timeout(this.requestTimeoutNanos, false));
        });
    }

    /**
     * Deletes this registry's entries (so its locks are free at once); holds still open report
     * themselves lost and waiters fail. The client stays open: it is the application's.
     */
    @Override
    public void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        ZookeeperSession current = this.session;
        if (current != null) {
            List<ZookeeperEntry> open = new ArrayList<>(current.entries);
            loseSession(current, "the lock registry was closed");
            List<CompletableFuture<CuratorEvent>> deletions = new ArrayList<>();
            for (ZookeeperEntry entry : open) {
                String path = entry.path();
                if (path != null) {
                    deletions.add(deleteGuaranteed(entry.lockKey(), path));
                }
            }
            try {
                CompletableFuture.allOf(deletions.toArray(CompletableFuture[]::new))
                    .get(this.requestTimeoutNanos, TimeUnit.NANOSECONDS);
            }
            catch (Exception ex) {
                logger.warn("Could not delete this registry's lock entries from {} at close ({}); they end with "
                        + "its ZooKeeper session", this.where, ex.toString());
            }
        }
        this.client.getConnectionStateListenable().removeListener(this.connectionStates);
        if (this.listensToConnectionEvents) {
            this.client.getCuratorListenable().removeListener(this.connectionEvents);
        }
        this.maintenance.shutdownNow();
        this.connector.shutdownNow();
        this.awaitingConnection.clear();
    }

    @Nullable ZookeeperSession session() {
        return this.session;
    }

    @Override
    public String namespace() {
        return this.keyspace.namespace();
    }

    /** @return the bytes of the key's lock node path */
    @Override
    public long keySize(String key) {
        return this.keyspace.lockNodeSize(key);
    }

    @Override
    public long maxKeySize() {
        return MAX_LOCK_NODE_BYTES;
    }

    @Override
    public long requestTimeoutNanos() {
        return this.requestTimeoutNanos;
    }

    /** @return whether {@code checked} was not lost and is still the client's session */
    boolean isStillServing(ZookeeperSession checked) {
        if (checkContact(checked)) {
            return false;
        }
        return isClientsSession(checked) && checked.lostReason() == null;
    }

    /**
     * Alive while within its contact budget, not lost, and still the client's session (its handle
     * may have moved on): as long as its holds are, so a brief disconnection is no outage.
     */
    @Override
    public boolean isSessionAlive() {
        ZookeeperSession current = this.session;
        if (current == null || checkContact(current)) {
            return false;
        }
        try {
            if (this.client.getZookeeperClient().getZooKeeper().getSessionId() != current.id) {
                loseSession(current, "ZooKeeper expired session " + current.describe());
            }
        }
        catch (Exception ex) {
            return false;
        }
        return current.lostReason() == null;
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        return (this.session != null) ? Duration.ofNanos(System.nanoTime() - this.lastContactAt) : null;
    }

    @Override
    public String describe() {
        return this.where;
    }

    @Override
    public void checkOpen() {
        if (this.closed) {
            throw new IllegalStateException("The ZooKeeper lock registry on " + this.where + " is closed");
        }
    }

    @Override
    public boolean isClosed() {
        return this.closed;
    }
}
