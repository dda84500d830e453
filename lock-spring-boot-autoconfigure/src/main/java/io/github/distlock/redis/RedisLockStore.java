package io.github.distlock.redis;

import java.math.BigDecimal;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.redis.RedisConnection.Connected;
import io.github.distlock.store.DaemonThreads;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockListing;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis {@link LockStore}: a queue per key kept by {@link RedisScripts}, entries tied to a
 * {@link RedisSession} whose key and entry keys are renewed together every third of the lease
 * TTL on one maintenance thread, handovers published on one channel per namespace.
 *
 * <p>Both connections are probed with a {@code PING} every sixth of the TTL; a pair that answers
 * none within the probe timeout (a sixth of the TTL, at most the request timeout) is replaced, so
 * a connection that falls silent without a reset is replaced within a third of the TTL, and the
 * renewal sent on the new pair at once still comes before the holds' deadlines.
 *
 * <p>Invariants: an entry is tracked (renewed, reachable by handover messages) from just before
 * its write until it ends; an entry or session is lost exactly when Redis says its key is gone or
 * when one TTL passed since the send of its last acknowledged renewal, whichever comes first, so
 * no hold outlives what Redis may have expired. Removals that Redis did not confirm are retried
 * until confirmed or until the entry has expired on its own.
 */
final class RedisLockStore implements LockStore {

    /**
     * The longest common start of a lock's names (in UTF-8 bytes) this store writes: 1 MiB. Redis
     * itself takes names up to 512 MB, but a script call carries a key's names four times, on the
     * connection that every hold of the registry shares and whose renewals must not wait behind
     * it, and Redis copies them to its replicas.
     */
    private static final long MAX_NAME_BYTES = 1024 * 1024;

    private static final Logger logger = LoggerFactory.getLogger(RedisLockStore.class);

    /** Pause before a removal Redis did not confirm is tried again; doubled up to the next bound. */
    private static final long REMOVAL_RETRY_MILLIS = 500;

    private static final long MAX_REMOVAL_RETRY_MILLIS = 5_000;

    /** How long a removal's marker lives, as {@link RedisScripts#REMOVE} takes it: milliseconds, as text. */
    String removalMarkerArgument() {
        return this.removalMarkerArgument;
    }

    /** Why an entry is lost when a script dropped it from its queue (see {@link RedisScripts}). */
    static final String DROPPED_FROM_QUEUE = "its lock entry was gone from Redis when another entry reached the head "
            + "of its queue (expired, deleted behind the registry's back, or lost in a failover or a restart)";

    /** A waiter checks its place at least this often, since pub/sub may drop a handover message. */
    private static final long MAX_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final AbstractRedisClient client;

    private final RedisKeyspace keyspace;

    private final long ttlNanos;

    private final long requestTimeoutNanos;

    /** How long a probe of the connections waits for its answers; see {@link #probe()}. */
    private final long probeTimeoutNanos;

    private final String ttlArgument;

    /** How long a removal's marker lives (see {@link RedisScripts#REMOVE}): milliseconds, as text. */
    private final String removalMarkerArgument;

    private final String ownerIdentity;

    private final String where;

    private final StoreEvents statistics;

    private final HoldLossListener losses;

    private final RedisConnection connection;

    private final ScheduledExecutorService maintenance;

    private final ExecutorService connector;

    /** Entries by id, for handover messages. */
    private final Map<String, RedisEntry> entries = new ConcurrentHashMap<>();

    private final ReentrantLock sessionStart = new ReentrantLock();

    private final AtomicLong entrySequence = new AtomicLong();

    private final AtomicInteger pendingRemovals = new AtomicInteger();

    /** Set while a probe waits for its answers, so that a slow answer does not pile up probes. */
    private final AtomicBoolean probing = new AtomicBoolean();

    private final RedisConnectionStateListener reconnects = new RedisConnectionStateListener() {
        @Override
        public void onRedisConnected(RedisChannelHandler<?, ?> connection, SocketAddress address) {
            Connected connected = RedisLockStore.this.connection.connectedOrNull();
            if (connected != null && connection == connected.commands() && !RedisLockStore.this.closed) {
                // A restarted Redis may have forgotten the session: holders learn it now, not a TTL/3 later.
                RedisLockStore.this.maintenance.execute(RedisLockStore.this::renew);
            }
        }
    };

    private volatile @Nullable RedisSession session;

    private final ReentrantLock deadlineLock = new ReentrantLock();

    private @Nullable ScheduledFuture<?> deadlineCheck;

    private volatile boolean closed;

    RedisLockStore(AbstractRedisClient client, RedisKeyspace keyspace, Duration leaseTtl, Duration requestTimeout,
            String ownerIdentity, String where, StoreEvents statistics, HoldLossListener losses) {
        this.client = client;
        this.keyspace = keyspace;
        this.ttlNanos = leaseTtl.toNanos();
        this.ttlArgument = Long.toString(leaseTtl.toMillis());
        // A removal may be resent (Lettuce resends unanswered commands after a reconnect) while its caller still
        // waits for the answer, a request timeout: the marker outlives that.
        this.removalMarkerArgument = Long.toString(Math.max(leaseTtl.toMillis(), 2 * requestTimeout.toMillis()));
        this.requestTimeoutNanos = requestTimeout.toNanos();
        this.ownerIdentity = ownerIdentity;
        this.where = where;
        this.statistics = statistics;
        this.losses = losses;
        this.maintenance = Executors
            .newSingleThreadScheduledExecutor(DaemonThreads.named("distlock-redis-maintenance"));
        this.connector = Executors.newCachedThreadPool(DaemonThreads.numbered("distlock-redis-connect"));
        // Opening a pair takes several calls (connecting, INFO, SUBSCRIBE): twice a call's bound.
        this.connection = new RedisConnection(client, keyspace.channel(), this::message, this::subscribed,
                this::opened, this.connector, 2 * this.requestTimeoutNanos);
        client.addListener(this.reconnects);
        long renewalPeriod = Math.max(1, this.ttlNanos / 3);
        this.maintenance.scheduleWithFixedDelay(this::renew, renewalPeriod, renewalPeriod, TimeUnit.NANOSECONDS);
        long probePeriod = Math.max(1, this.ttlNanos / 6);
        this.probeTimeoutNanos = Math.min(probePeriod, this.requestTimeoutNanos);
        this.maintenance.scheduleWithFixedDelay(this::probe, probePeriod, probePeriod, TimeUnit.NANOSECONDS);
    }

    // ---- entries -------------------------------------------------------------------------------

    @Override
    public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException {
        checkOpen();
        RedisSession current = liveSession(attempt);
        String value = EntryValue.encode(this.ownerIdentity, Thread.currentThread().getName(),
                System.currentTimeMillis());
        return new RedisEntry(this, current, current.id + "-" + this.entrySequence.incrementAndGet(), key, value);
    }

    Connected connected(Wait wait) throws StoreUnavailableException, InterruptedException {
        Connected connected = this.connection.connectedOrNull();
        if (connected != null) {
            return connected;
        }
        // A copy: giving up on it must not cancel the attempt other callers share.
        return StoreCalls.await(this.connection.connection().copy(), wait, "Connecting to " + this.where);
    }

    private RedisSession liveSession(Wait attempt) throws StoreUnavailableException, InterruptedException {
        RedisSession current = this.session;
        if (current != null && current.isAlive(this.ttlNanos)) {
            return current;
        }
        if (!attempt.lock(this.sessionStart)) {
            throw new StoreUnavailableException("Starting a session on " + this.where + " took too long", null);
        }
        try {
            checkOpen();
            current = this.session;
            if (current != null && current.isAlive(this.ttlNanos)) {
                return current;
            }
            if (current != null) {
                loseSession(current, "Redis acknowledged no renewal of the session within the lease TTL");
            }
            Connected connected = connected(attempt);
            String id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
            String key = this.keyspace.namespace() + "session:" + id;
            long sentAt = System.nanoTime();
            StoreCalls.await(connected.async().set(key, this.ownerIdentity, SetArgs.Builder.px(ttlMillis())),
                    attempt.atMost(this.requestTimeoutNanos), "Starting a session");
            RedisSession started = new RedisSession(id, key, sentAt);
            this.session = started;
            scheduleDeadlineCheck();
            return started;
        }
        finally {
            this.sessionStart.unlock();
        }
    }

    void track(RedisEntry entry) {
        entry.session.entries.add(entry);
        this.entries.put(entry.id, entry);
        // Checked after adding: a session lost before that would never renew or end this entry.
        String sessionLost = entry.session.lostReason();
        if (sessionLost != null) {
            entry.lose(sessionLost, true);
        }
    }

    void untrack(RedisEntry entry) {
        entry.session.entries.remove(entry);
        this.entries.remove(entry.id);
    }

    /**
     * The subscription took effect (again): messages published while it was down are lost, so
     * waiters check their place, every entry counts as queued behind, and a renewal runs at once:
     * a lost {@code -<id>} (an entry dropped from its queue) is made up for by the renewal's
     * answer, not a TTL/3 later. Only the subscription may have been down (Redis closes a
     * subscriber past its output buffer limit): then the command connection did not reconnect, and
     * {@link #reconnects} renewed nothing. Entries tracked later miss no message.
     */
    private void subscribed() {
        this.entries.values().forEach(RedisEntry::messagesMayBeLost);
        renewSoon();
    }

    /**
     * A new pair of connections is open: renews at once, since the pair it replaced may have
     * failed renewals for up to a third of the TTL.
     */
    private void opened() {
        renewSoon();
    }

    private void renewSoon() {
        try {
            this.maintenance.execute(this::renew);
        }
        catch (RejectedExecutionException ex) {
            // Closed meanwhile.
        }
    }

    /**
     * Sends a {@code PING} on both connections and replaces them if either is not answered within
     * the probe timeout: Lettuce notices a connection that died without a reset (a NAT or firewall
     * that forgot it, a host gone) only when the kernel gives up, minutes later, and until then
     * handover messages stop and renewals fail. An error answer proves the connection alive.
     * While there are holds to renew, connects again after a failed attempt without waiting for a
     * caller to. Never throws.
     */
    private void probe() {
        try {
            Connected connected = this.connection.connectedOrNull();
            if (connected == null) {
                RedisSession current = this.session;
                if (current != null && current.lostReason() == null) {
                    this.connection.reconnectIfFailed();
                }
                return;
            }
            if (this.closed || !this.probing.compareAndSet(false, true)) {
                return;
            }
            CompletableFuture<Void> answered;
            try {
                answered = connected.ping();
            }
            catch (RuntimeException ex) {
                // Refused at once (a closed connection): as good as unanswered.
                answered = CompletableFuture.failedFuture(ex);
            }
            answered.orTimeout(this.probeTimeoutNanos, TimeUnit.NANOSECONDS).whenComplete((pong, failure) -> {
                Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
                if (cause != null && !(cause instanceof RedisCommandExecutionException) && !this.closed) {
                    this.statistics.backendError();
                    logger.warn("The Redis lock registry's connections to {} did not answer a PING within {} ({}); "
                            + "connecting again", this.where, Duration.ofNanos(this.probeTimeoutNanos),
                            cause.toString());
                    this.connection.replace(connected);
                }
                // Only now: a probe sent meanwhile on the pair being replaced would fail and report it twice.
                this.probing.set(false);
            });
        }
        catch (RuntimeException ex) {
            // A throw would cancel the periodic task for good.
            logger.warn("Probing the Redis connections to {} failed; trying again at the next tick", this.where, ex);
        }
    }

    /**
     * A message on the channel: an entry id (it holds now), {@code +} and an id (queued behind it),
     * or {@code -} and an id (dropped from its queue because its liveness key was gone).
     */
    private void message(String message) {
        char kind = message.isEmpty() ? ' ' : message.charAt(0);
        boolean marked = kind == '+' || kind == '-';
        RedisEntry entry = this.entries.get(marked ? message.substring(1) : message);
        if (entry == null) {
            return;
        }
        if (kind == '+') {
            entry.queuedBehind();
        }
        else if (kind == '-') {
            entry.lose(DROPPED_FROM_QUEUE, false);
        }
        else {
            entry.handedOver();
        }
    }

    void holdLost(RedisEntry entry, String reason) {
        this.losses.holdLost(entry, reason);
    }

    void failed(StoreUnavailableException ex) {
        this.statistics.backendError();
        logger.debug("Redis call failed: {}", ex.getMessage());
    }

    /**
     * Removes what is left of an entry, in the background, until Redis answers (whatever the
     * answer: the entry is gone then) or the registry closes. Whether an entry "expired on its
     * own" cannot be told from this side (Redis may have run a late write or renewal), so there
     * is no giving up on time; the first attempt is sent now, from the caller, so that commands it
     * sends later come after it.
     */
    void removeLater(RedisEntry entry) {
        this.pendingRemovals.incrementAndGet();
        removeAttempt(entry, null, REMOVAL_RETRY_MILLIS);
    }

    /**
     * Removes what is left of an entry whose acquisition gave up, and waits briefly for Redis to
     * confirm, so that the next acquisition (in any process) does not find it in its way; if Redis
     * does not confirm in time, removal goes on in the background as for {@link #removeLater}.
     * Does not wait while there is no open connection, nor past {@code attempt}: an acquisition
     * returns within its wait (or, for a try-once, its first attempt's bound).
     */
    void removeBeforeReturning(RedisEntry entry, Wait attempt) {
        this.pendingRemovals.incrementAndGet();
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        removeAttempt(entry, confirmed, REMOVAL_RETRY_MILLIS);
        Connected connected = this.connection.connectedOrNull();
        if (connected == null || !connected.commands().isOpen()) {
            // Never connected, or reconnecting (Lettuce holds commands until then): no answer is coming soon.
            return;
        }
        if (!StoreCalls.awaitGiveUpConfirmation(confirmed, attempt, this.requestTimeoutNanos)) {
            logger.debug("Removal of lock entry {} not confirmed within the acquisition's bound; it goes on in the "
                    + "background", entry.id);
        }
    }

    /** @param confirmed completed when Redis answers an attempt of this removal, if someone waits for it */
    private void removeAttempt(RedisEntry entry, @Nullable CompletableFuture<Void> confirmed, long nextDelayMillis) {
        Connected connected = this.connection.connectedOrNull();
        if (connected == null) {
            retryRemoval(entry, confirmed, nextDelayMillis);
            return;
        }
        connected.eval(RedisScripts.REMOVE, ScriptOutputType.INTEGER,
                new String[] { entry.names().queue(), entry.entryKey() }, entry.id, entry.names().entryPrefix(),
                this.keyspace.channel(), this.removalMarkerArgument)
            .orTimeout(this.requestTimeoutNanos, TimeUnit.NANOSECONDS)
            .whenComplete((removed, failure) -> {
                if (failure == null) {
                    this.pendingRemovals.decrementAndGet();
                    if (confirmed != null) {
                        confirmed.complete(null);
                    }
                }
                else {
                    this.statistics.backendError();
                    retryRemoval(entry, confirmed, nextDelayMillis);
                }
            });
    }

    private void retryRemoval(RedisEntry entry, @Nullable CompletableFuture<Void> confirmed, long delayMillis) {
        if (this.maintenance.isShutdown()) {
            this.pendingRemovals.decrementAndGet();
            return;
        }
        try {
            this.maintenance.schedule(() -> removeAttempt(entry, confirmed, Math.min(2 * delayMillis,
                    MAX_REMOVAL_RETRY_MILLIS)), delayMillis, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed meanwhile: the entry's key expires with its TTL, nobody renews it.
            this.pendingRemovals.decrementAndGet();
        }
    }

    /** For tests: runs {@code task} on the maintenance thread. */
    void runOnMaintenanceThread(Runnable task) {
        this.maintenance.execute(task);
    }

    /** @return removals not yet confirmed by Redis (nor made moot by expiry) */
    int pendingRemovals() {
        return this.pendingRemovals.get();
    }

    // ---- session renewal -----------------------------------------------------------------------

    /** Renews the session key and every written entry's key in one pipelined batch; never throws. */
    private void renew() {
        try {
            renewBatch();
        }
        catch (RuntimeException ex) {
            // A throw would cancel the periodic task for good.
            logger.warn("Renewal of the Redis lock session on {} failed; trying again at the next tick", this.where,
                    ex);
        }
    }

    private void renewBatch() {
        RedisSession current = this.session;
        Connected connected = this.connection.connectedOrNull();
        if (current == null || current.lostReason() != null || connected == null) {
            checkDeadlines();
            return;
        }
        // Batches may overlap: a slow one does not hold back the next (renewed() keeps the latest).
        long sentAt = System.nanoTime();
        String ttl = ttlArgument();
        List<CompletableFuture<?>> batch = new ArrayList<>();
        batch.add(connected.async().pexpire(current.key, ttlMillis()).toCompletableFuture()
            .thenAccept(renewed -> {
                if (Boolean.TRUE.equals(renewed)) {
                    current.renewed(sentAt);
                }
                else {
                    loseSession(current, "its session key was gone from Redis (expired or deleted)");
                }
            }));
        for (RedisEntry entry : current.entries) {
            if (entry.isWritten()) {
                batch.add(connected.eval(RedisScripts.RENEW, ScriptOutputType.INTEGER,
                        new String[] { entry.entryKey(), entry.names().queue(), entry.names().counter() }, entry.id,
                        ttl)
                    .thenAccept(renewed -> {
                        if (Long.valueOf(1).equals(renewed)) {
                            if (!entry.renewed(sentAt)) {
                                // Ended meanwhile: Redis just extended a key nobody renews or removes.
                                removeLater(entry);
                            }
                        }
                        else {
                            entry.lose("its lock entry was gone from Redis (expired or deleted)", false);
                        }
                    }));
            }
        }
        CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)).whenComplete((done, failure) -> {
            if (failure != null) {
                this.statistics.backendError();
                logger.debug("Renewal of the Redis lock session failed: {}", failure.getMessage());
            }
        });
        scheduleDeadlineCheck();
    }

    /** Ends what Redis may have expired: a session or entry one TTL after the send of its last acknowledged renewal. */
    private void checkDeadlines() {
        RedisSession current = this.session;
        if (current == null) {
            return;
        }
        long now = System.nanoTime();
        if (current.lostReason() == null && now - current.renewedAt() >= this.ttlNanos) {
            loseSession(current, "Redis acknowledged no renewal of the session within the lease TTL ("
                    + Duration.ofNanos(this.ttlNanos) + ")");
        }
        for (RedisEntry entry : this.entries.values()) {
            if (entry.isWritten() && now - entry.renewedAt() >= this.ttlNanos) {
                entry.lose(noRenewal(this.ttlNanos), true);
            }
        }
        scheduleDeadlineCheck();
    }

    /** Why an entry whose renewals Redis did not acknowledge in time is lost. */
    static String noRenewal(long ttlNanos) {
        return "Redis acknowledged no renewal of the lock entry within the lease TTL (" + Duration.ofNanos(ttlNanos) + ")";
    }

    /** Arms one check at the earliest deadline of the current session and its entries. */
    void scheduleDeadlineCheck() {
        this.deadlineLock.lock();
        try {
            RedisSession current = this.session;
            if (current == null || this.maintenance.isShutdown()) {
                return;
            }
            long earliest = current.renewedAt();
            for (RedisEntry entry : this.entries.values()) {
                if (entry.isWritten() && entry.renewedAt() - earliest < 0) {
                    earliest = entry.renewedAt();
                }
            }
            long delay = Math.max(0, earliest + this.ttlNanos - System.nanoTime());
            if (this.deadlineCheck != null) {
                this.deadlineCheck.cancel(false);
            }
            if (current.lostReason() == null || !this.entries.isEmpty()) {
                this.deadlineCheck = this.maintenance.schedule(this::checkDeadlines, delay, TimeUnit.NANOSECONDS);
            }
        }
        catch (RejectedExecutionException ex) {
            // Closed meanwhile.
        }
        finally {
            this.deadlineLock.unlock();
        }
    }

    private void loseSession(RedisSession lost, String reason) {
        if (!lost.lose(reason)) {
            return;
        }
        if (!this.closed) {
            this.statistics.sessionLost();
            logger.warn("Redis lock session {} on {} ended: {}; its locks are lost", lost.id, this.where, reason);
        }
        for (RedisEntry entry : lost.entries) {
            entry.lose(reason, true);
        }
    }

    // ---- reads ---------------------------------------------------------------------------------

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        try {
            Wait bound = Wait.timeout(this.requestTimeoutNanos, false);
            Connected connected = connected(bound);
            List<Object> answer = StoreCalls.await(connected.evalList(RedisScripts.READ,
                    new String[] { this.keyspace.queue(key) }, this.keyspace.entryPrefix(key),
                    String.valueOf(maxEntries)), bound, "Reading lock '" + key + "'");
            return snapshot(key, answer, withLeases);
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read lock '" + key + "' from " + this.where + ": "
                    + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    private static LockSnapshot snapshot(String key, List<Object> answer, boolean withLeases) {
        List<LockSnapshot.Entry> queued = new ArrayList<>();
        for (int i = 0; i + 3 < answer.size(); i += 4) {
            String id = (String) answer.get(i);
            long fence = new BigDecimal((String) answer.get(i + 1)).longValue();
            EntryValue value = EntryValue.decode((String) answer.get(i + 2));
            long ttlMillis = (Long) answer.get(i + 3);
            Duration leaseLeft = (withLeases && ttlMillis >= 0) ? Duration.ofMillis(ttlMillis) : null;
            queued.add(new LockSnapshot.Entry(value.owner(), value.thread(), fence, value.queuedAt(), id, leaseLeft));
        }
        return queued.isEmpty() ? new LockSnapshot(key, null, List.of())
                : new LockSnapshot(key, queued.get(0), queued.subList(1, queued.size()));
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        try {
            Wait bound = Wait.timeout(this.requestTimeoutNanos, false);
            Connected connected = connected(bound);
            // Each lock read from the queue the scan found, by its key.
            Map<String, String> queues = new LinkedHashMap<>();
            ScanArgs match = ScanArgs.Builder.matches(this.keyspace.queuePattern()).limit(1000);
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = StoreCalls.await(connected.async().scan(cursor, match),
                        bound.atMost(this.requestTimeoutNanos), "Listing the locks");
                for (String queue : page.getKeys()) {
                    String key = this.keyspace.lockKeyOf(queue);
                    if (key != null) {
                        queues.put(key, queue);
                    }
                }
                cursor = page;
            }
            while (!cursor.isFinished());
            return LockListing.list(this.keyspace.namespace(), queues.keySet(), maxEntries, (key, max) -> snapshot(key,
                    StoreCalls.await(connected.evalList(RedisScripts.READ, new String[] { queues.get(key) },
                            this.keyspace.entryPrefix(key), String.valueOf(max)), bound, "Reading lock '" + key + "'"),
                    true));
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read the locks from " + this.where + ": " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    // ---- lifecycle and settings ----------------------------------------------------------------

    @Override
    public CompletableFuture<Void> connect() {
        return StoreCalls.connect(this, this.connector, this.where,
                () -> liveSession(Wait.timeout(this.requestTimeoutNanos, false)));
    }

    /**
     * Ends every entry of this store in Redis (so its locks are free at once) and closes its
     * connections; holds still open report themselves lost and waiters fail. The client stays open.
     */
    @Override
    public void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        // A session being started now is installed before this reads it (and none after: closed is set).
        this.sessionStart.lock();
        RedisSession current;
        try {
            current = this.session;
        }
        finally {
            this.sessionStart.unlock();
        }
        List<RedisEntry> open = new ArrayList<>(this.entries.values());
        if (current != null) {
            loseSession(current, "the lock registry was closed");
        }
        Connected connected = this.connection.connectedOrNull();
        if (connected != null) {
            List<CompletableFuture<?>> removals = new ArrayList<>();
            for (RedisEntry entry : open) {
                removals.add(connected.eval(RedisScripts.REMOVE, ScriptOutputType.INTEGER,
                        new String[] { entry.names().queue(), entry.entryKey() }, entry.id,
                        entry.names().entryPrefix(), this.keyspace.channel(), this.removalMarkerArgument));
            }
            if (current != null) {
                removals.add(connected.async().del(current.key).toCompletableFuture());
            }
            try {
                CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new))
                    .get(this.requestTimeoutNanos, TimeUnit.NANOSECONDS);
            }
            catch (Exception ex) {
                logger.warn("Could not remove this registry's lock entries from {} at close ({}); they expire "
                        + "within the lease TTL", this.where, ex.toString());
            }
        }
        this.client.removeListener(this.reconnects);
        this.maintenance.shutdownNow();
        this.connector.shutdownNow();
        this.connection.close();
    }

    RedisKeyspace keyspace() {
        return this.keyspace;
    }

    long ttlNanos() {
        return this.ttlNanos;
    }

    long ttlMillis() {
        return TimeUnit.NANOSECONDS.toMillis(this.ttlNanos);
    }

    /** The TTL as the scripts take it: milliseconds, as text. */
    String ttlArgument() {
        return this.ttlArgument;
    }

    /** A waiter checks its place at least this often: a third of the TTL, at most 5 s. */
    long recheckIntervalNanos() {
        return Math.min(this.ttlNanos / 3, MAX_RECHECK_NANOS);
    }

    @Nullable RedisSession session() {
        return this.session;
    }

    @Override
    public String namespace() {
        return this.keyspace.namespace();
    }

    /** @return the bytes of the common start of the key's names, {@code <namespace>{<escaped key>}} */
    @Override
    public long keySize(String key) {
        return this.keyspace.baseSize(key);
    }

    @Override
    public long maxKeySize() {
        return MAX_NAME_BYTES;
    }

    @Override
    public long requestTimeoutNanos() {
        return this.requestTimeoutNanos;
    }

    @Override
    public boolean isSessionAlive() {
        RedisSession current = this.session;
        return current != null && current.isAlive(this.ttlNanos);
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        RedisSession current = this.session;
        return (current != null) ? Duration.ofNanos(System.nanoTime() - current.renewedAt()) : null;
    }

    @Override
    public String describe() {
        return this.where;
    }

    @Override
    public void checkOpen() {
        if (this.closed) {
            throw new IllegalStateException("The Redis lock registry on " + this.where + " is closed");
        }
    }

    @Override
    public boolean isClosed() {
        return this.closed;
    }
}
