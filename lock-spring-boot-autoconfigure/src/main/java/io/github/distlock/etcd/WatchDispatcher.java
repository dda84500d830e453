package io.github.distlock.etcd;

import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-lived prefix watch over the registry's namespace that hands deletions (and creations,
 * so a holder knows when someone queued behind it) to the queue entries of this process, so a handoff costs one watch event and no waiter opens a watch of its
 * own (a per-wait watch starting at an old revision is served by etcd's 100 ms catch-up loop).
 *
 * <p>Invariant: a listener that {@link #subscribe subscribed} before it wrote its entry sees every
 * deletion under its root committed after that write. The watch is created (and acknowledged by
 * etcd) before the first subscription returns, and after a broken stream it resumes from the
 * revision after the last event delivered. Where that cannot be promised (the stream was closed
 * and had to be recreated, or events were compacted), every listener is told to
 * {@linkplain Listener#resync() re-read} its state.
 *
 * <p>A stream on a member that froze or was partitioned away stays silent without failing until
 * gRPC's keep-alive gives up on the connection (seconds), and waiters would learn of handoffs only
 * from their safety re-reads. So while anyone listens, a stream silent for the probe interval is
 * asked for a progress report; if none arrives within another interval, it is reopened (round
 * robin sends the new stream to another member) and every listener re-reads.
 */
final class WatchDispatcher implements AutoCloseable {

    /** Receives deletions under one lock root. Called on jetcd's threads: must not block. */
    interface Listener {

        void deleted(ByteSequence etcdKey, long revision);

        /** A key under the root was created at {@code createRevision} (an entry queued, in any process). */
        default void created(ByteSequence etcdKey, long createRevision) {
        }

        /** Events may have been missed: re-read state from etcd. */
        void resync();

        /**
         * Every event of one watch response that concerns this listener was delivered. One
         * revision may delete several keys (a prefix delete), whose events come one by one: a
         * listener acts on others' deletions here, once it has also seen any of its own.
         */
        default void eventsDelivered() {
        }
    }

    private static final Logger logger = LoggerFactory.getLogger(WatchDispatcher.class);

    private static final long REOPEN_DELAY_MILLIS = 250;

    private final Watch watchClient;

    private final EtcdKeyspace keyspace;

    private final ScheduledExecutorService scheduler;

    private final long probeNanos;

    private final Map<ByteSequence, Set<Listener>> listenersByRoot = new ConcurrentHashMap<>();

    /**
     * Guards the fields below. Never held while calling into jetcd: jetcd calls our listener while
     * holding its own lock (for example when a watcher is closed). Not a monitor: acquiring virtual
     * threads take it, and contending for a monitor pins their carrier on JDK 21 to 23.
     */
    private final ReentrantLock lifecycle = new ReentrantLock();

    /** The current stream; {@code null} before the first open and once closed. */
    private Watch.@Nullable Watcher watcher;

    /** Incremented by every open; a stream's callbacks count only while their generation is current. */
    private long generation;

    /**
     * Completes when etcd acknowledged the current stream; earlier incomplete ones follow it.
     * {@code null} before the first open, never again after it.
     */
    private @Nullable CompletableFuture<Void> created;

    /** Revision up to which events were delivered. */
    private long deliveredRevision;

    /** When the current stream last answered anything. */
    private long lastHeardNanos;

    /** When a progress report was requested and not answered yet; 0 if none is outstanding. */
    private long progressRequestedNanos;

    private boolean probeScheduled;

    private boolean closed;

    /**
     * @param probeNanos how long a stream may stay silent while someone listens before it is asked
     * for a progress report, and how long it then has to answer
     */
    WatchDispatcher(Watch watchClient, EtcdKeyspace keyspace, ScheduledExecutorService scheduler, long probeNanos) {
        this.watchClient = watchClient;
        this.keyspace = keyspace;
        this.scheduler = scheduler;
        this.probeNanos = probeNanos;
    }

    /**
     * Registers {@code listener} for deletions under {@code root}, opening the watch first if it
     * is not open yet.
     */
    void subscribe(ByteSequence root, Listener listener, Wait wait)
            throws StoreUnavailableException, InterruptedException {
        // Added inside compute: an unsubscribe emptying the set cannot drop it from under us.
        this.listenersByRoot.compute(root, (r, listeners) -> {
            Set<Listener> joined = (listeners != null) ? listeners : ConcurrentHashMap.newKeySet();
            joined.add(listener);
            return joined;
        });
        try {
            EtcdCalls.await(ensureOpen(), wait, "watch creation");
        }
        catch (StoreUnavailableException | InterruptedException | RuntimeException ex) {
            unsubscribe(root, listener);
            throw ex;
        }
    }

    void unsubscribe(ByteSequence root, Listener listener) {
        this.listenersByRoot.computeIfPresent(root, (r, listeners) -> {
            listeners.remove(listener);
            return listeners.isEmpty() ? null : listeners;
        });
    }

    /** Opens the watch stream if it is not open; completes when etcd acknowledged it. */
    CompletableFuture<Void> ensureOpen() {
        StreamListener first;
        this.lifecycle.lock();
        try {
            if (this.closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("registry is closed"));
            }
            if (this.created != null) {
                // Opened before.
                return this.created;
            }
            first = nextGeneration();
        }
        finally {
            this.lifecycle.unlock();
        }
        // Outside the lock: jetcd may call back into our listener while holding its own.
        return start(first, 0);
    }

    /**
     * Opens a new stream from {@code fromRevision} (0: from now) and returns the future that
     * completes when etcd acknowledges it. Callers waiting on an older, incomplete future are
     * released by the new one.
     */
    private CompletableFuture<Void> open(long fromRevision) {
        StreamListener listener;
        this.lifecycle.lock();
        try {
            listener = nextGeneration();
        }
        finally {
            this.lifecycle.unlock();
        }
        return start(listener, fromRevision);
    }

    /** Makes a new stream generation current. Caller holds {@link #lifecycle}. */
    private StreamListener nextGeneration() {
        CompletableFuture<Void> previous = this.created;
        this.created = new CompletableFuture<>();
        if (previous != null && !previous.isDone()) {
            this.created.whenComplete((done, failure) -> previous.complete(null));
        }
        StreamListener listener = new StreamListener(++this.generation);
        this.lastHeardNanos = System.nanoTime();
        this.progressRequestedNanos = 0;
        if (!this.probeScheduled) {
            this.probeScheduled = true;
            scheduleProbe();
        }
        return listener;
    }

    /** Opens the stream of {@code listener}'s generation; never called holding {@link #lifecycle}. */
    private CompletableFuture<Void> start(StreamListener listener, long fromRevision) {
        WatchOption.Builder option = WatchOption.builder()
            .isPrefix(true)
            .withCreateNotify(true)
            .withRequireLeader(true);
        if (fromRevision > 0) {
            option.withRevision(fromRevision);
        }
        Watch.Watcher opened = this.watchClient.watch(this.keyspace.locksPrefix(), option.build(), listener);
        Watch.Watcher stale = null;
        CompletableFuture<Void> ready;
        this.lifecycle.lock();
        try {
            if (this.closed || listener.generation != this.generation) {
                stale = opened;
            }
            else {
                stale = this.watcher;
                this.watcher = opened;
            }
            // Set by nextGeneration(), which ran before this.
            ready = Objects.requireNonNull(this.created);
        }
        finally {
            this.lifecycle.unlock();
        }
        if (stale != null) {
            stale.close();
        }
        return ready;
    }

    private void onEvents(WatchResponse response) {
        long revision = response.getHeader().getRevision();
        Set<Listener> told = new HashSet<>();
        for (WatchEvent event : response.getEvents()) {
            boolean deleted = event.getEventType() == WatchEvent.EventType.DELETE;
            // Puts are entries being created (entries are written once): a holder learns that someone queued behind it.
            boolean created = event.getEventType() == WatchEvent.EventType.PUT && event.getKeyValue().getVersion() == 1;
            ByteSequence key = event.getKeyValue().getKey();
            ByteSequence root = (deleted || created) ? this.keyspace.rootOf(key) : null;
            Set<Listener> listeners = (root != null) ? this.listenersByRoot.get(root) : null;
            if (listeners != null) {
                long eventRevision = event.getKeyValue().getModRevision();
                told.addAll(listeners);
                for (Listener listener : listeners) {
                    if (deleted) {
                        listener.deleted(key, eventRevision);
                    }
                    else {
                        listener.created(key, event.getKeyValue().getCreateRevision());
                    }
                }
            }
            revision = Math.max(revision, event.getKeyValue().getModRevision());
        }
        for (Listener listener : told) {
            listener.eventsDelivered();
        }
        this.lifecycle.lock();
        try {
            this.deliveredRevision = Math.max(this.deliveredRevision, revision);
        }
        finally {
            this.lifecycle.unlock();
        }
    }

    private void resyncAll() {
        this.listenersByRoot.values().forEach(listeners -> listeners.forEach(Listener::resync));
    }

    /** jetcd closed the watch for good (no leader, halt error): open a new one after a pause. */
    private void reopenLater(StreamListener broken) {
        try {
            this.scheduler.schedule(() -> reopen(broken.generation), REOPEN_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // The registry is closing: nothing to reopen.
        }
    }

    /** Caller holds {@link #lifecycle}. */
    private void scheduleProbe() {
        try {
            this.scheduler.schedule(this::probe, this.probeNanos / 2, TimeUnit.NANOSECONDS);
        }
        catch (RejectedExecutionException ex) {
            // The registry is closing.
            this.probeScheduled = false;
        }
    }

    /** Asks a silent stream for a progress report, and reopens one that did not answer in time. */
    private void probe() {
        Watch.Watcher silent = null;
        long unanswered = -1;
        long now = System.nanoTime();
        this.lifecycle.lock();
        try {
            if (this.closed) {
                return;
            }
            if (this.listenersByRoot.isEmpty()) {
                // Nobody waits for an event: nothing to lose.
                this.progressRequestedNanos = 0;
            }
            else if (this.progressRequestedNanos != 0) {
                if (this.lastHeardNanos - this.progressRequestedNanos >= 0) {
                    this.progressRequestedNanos = 0;
                }
                else if (now - this.progressRequestedNanos >= this.probeNanos) {
                    unanswered = this.generation;
                    this.progressRequestedNanos = 0;
                }
            }
            else if (now - this.lastHeardNanos >= this.probeNanos) {
                this.progressRequestedNanos = now;
                silent = this.watcher;
            }
            scheduleProbe();
        }
        finally {
            this.lifecycle.unlock();
        }
        if (silent != null) {
            try {
                silent.requestProgress();
            }
            catch (RuntimeException ex) {
                logger.debug("Could not ask the lock watch stream for progress: {}", EtcdCalls.describe(ex));
            }
        }
        if (unanswered >= 0) {
            logger.debug("Lock watch stream did not answer a progress request within {} ms; reopening",
                    TimeUnit.NANOSECONDS.toMillis(this.probeNanos));
            reopen(unanswered);
        }
    }

    private void reopen(long brokenGeneration) {
        long fromRevision;
        this.lifecycle.lock();
        try {
            if (this.closed || brokenGeneration != this.generation) {
                return;
            }
            // Resume after the last delivered event; listeners re-read anyway in case the
            // revision was compacted meanwhile.
            fromRevision = (this.deliveredRevision > 0) ? this.deliveredRevision + 1 : 0;
        }
        finally {
            this.lifecycle.unlock();
        }
        open(fromRevision);
        resyncAll();
    }

    @Override
    public void close() {
        Watch.Watcher toClose;
        this.lifecycle.lock();
        try {
            this.closed = true;
            toClose = this.watcher;
            this.watcher = null;
        }
        finally {
            this.lifecycle.unlock();
        }
        if (toClose != null) {
            toClose.close();
        }
    }

    /**
     * Follows one jetcd watcher. jetcd resumes a broken stream by itself (from the revision after
     * its last event) unless the error is final, in which case it completes the watcher: then we
     * open a new one. While a stream is being re-established, new subscribers wait for etcd to
     * acknowledge it.
     */
    private final class StreamListener implements Watch.Listener {

        private final long generation;

        StreamListener(long generation) {
            this.generation = generation;
        }

        @Override
        public void onNext(WatchResponse response) {
            WatchDispatcher.this.lifecycle.lock();
            try {
                if (isCurrent()) {
                    WatchDispatcher.this.lastHeardNanos = System.nanoTime();
                }
            }
            finally {
                WatchDispatcher.this.lifecycle.unlock();
            }
            if (response.isProgressNotify()) {
                // Only proof of life: its revision is not used to resume, as etcd before 3.4.25
                // may report progress past events not yet sent to an unsynced watcher.
                logger.trace("Lock watch stream reported progress at revision {}", response.getHeader().getRevision());
                return;
            }
            if (response.isCreatedNotify()) {
                WatchDispatcher.this.lifecycle.lock();
                try {
                    WatchDispatcher.this.deliveredRevision = Math.max(WatchDispatcher.this.deliveredRevision,
                            response.getHeader().getRevision());
                    CompletableFuture<Void> created = WatchDispatcher.this.created;
                    if (isCurrent() && created != null) {
                        created.complete(null);
                    }
                }
                finally {
                    WatchDispatcher.this.lifecycle.unlock();
                }
                return;
            }
            onEvents(response);
        }

        @Override
        public void onError(Throwable failure) {
            logger.debug("Lock watch stream interrupted: {}", EtcdCalls.describe(failure));
            WatchDispatcher.this.lifecycle.lock();
            try {
                // jetcd resumes this stream: new subscribers wait for its next acknowledgement.
                CompletableFuture<Void> created = WatchDispatcher.this.created;
                if (isCurrent() && created != null && created.isDone()) {
                    WatchDispatcher.this.created = new CompletableFuture<>();
                }
            }
            finally {
                WatchDispatcher.this.lifecycle.unlock();
            }
            resyncAll();
        }

        @Override
        public void onCompleted() {
            WatchDispatcher.this.lifecycle.lock();
            try {
                if (WatchDispatcher.this.closed || !isCurrent()) {
                    return;
                }
            }
            finally {
                WatchDispatcher.this.lifecycle.unlock();
            }
            logger.debug("Lock watch stream ended; reopening");
            reopenLater(this);
        }

        /** Caller holds {@link #lifecycle}. */
        private boolean isCurrent() {
            return this.generation == WatchDispatcher.this.generation;
        }
    }
}
