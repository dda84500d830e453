package io.github.distlock.etcd;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-lived prefix watch over the registry's namespace that hands deletions to the queue
 * entries of this process, so a handoff costs one watch event and no waiter opens a watch of its
 * own (a per-wait watch starting at an old revision is served by etcd's 100 ms catch-up loop).
 *
 * <p>Invariant: a listener that {@link #subscribe subscribed} before it wrote its entry sees every
 * deletion under its root committed after that write. The watch is created (and acknowledged by
 * etcd) before the first subscription returns, and after a broken stream it resumes from the
 * revision after the last event delivered. Where that cannot be promised (the stream was closed
 * and had to be recreated, or events were compacted), every listener is told to
 * {@linkplain Listener#resync() re-read} its state.
 */
final class WatchDispatcher implements AutoCloseable {

    /** Receives deletions under one lock root. Called on jetcd's threads: must not block. */
    interface Listener {

        void deleted(ByteSequence etcdKey, long revision);

        /** Events may have been missed: re-read state from etcd. */
        void resync();
    }

    private static final Logger logger = LoggerFactory.getLogger(WatchDispatcher.class);

    private static final long REOPEN_DELAY_MILLIS = 250;

    private final Watch watchClient;

    private final EtcdKeyspace keyspace;

    private final ScheduledExecutorService scheduler;

    private final Map<ByteSequence, Set<Listener>> listenersByRoot = new ConcurrentHashMap<>();

    /**
     * Guards the fields below. Never held while calling into jetcd: jetcd calls our listener while
     * holding its own lock (for example when a watcher is closed).
     */
    private final Object lifecycle = new Object();

    private Watch.Watcher watcher;

    /** Incremented by every open; a stream's callbacks count only while their generation is current. */
    private long generation;

    /** Completes when etcd acknowledged the current stream; earlier incomplete ones follow it. */
    private CompletableFuture<Void> created;

    /** Revision up to which events were delivered. */
    private long deliveredRevision;

    private boolean closed;

    WatchDispatcher(Watch watchClient, EtcdKeyspace keyspace, ScheduledExecutorService scheduler) {
        this.watchClient = watchClient;
        this.keyspace = keyspace;
        this.scheduler = scheduler;
    }

    /**
     * Registers {@code listener} for deletions under {@code root}, opening the watch first if it
     * is not open yet.
     */
    void subscribe(ByteSequence root, Listener listener, long timeoutNanos, boolean interruptible)
            throws EtcdCallFailedException, InterruptedException {
        // Added inside compute: an unsubscribe emptying the set cannot drop it from under us.
        this.listenersByRoot.compute(root, (r, listeners) -> {
            Set<Listener> joined = (listeners != null) ? listeners : ConcurrentHashMap.newKeySet();
            joined.add(listener);
            return joined;
        });
        try {
            EtcdCalls.await(ensureOpen(), timeoutNanos, interruptible, "watch creation");
        }
        catch (EtcdCallFailedException | InterruptedException | RuntimeException ex) {
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
        CompletableFuture<Void> ready;
        synchronized (this.lifecycle) {
            if (this.closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("registry is closed"));
            }
            if (this.generation > 0) {
                return this.created;
            }
            ready = open(0);
        }
        return ready;
    }

    /**
     * Opens a new stream from {@code fromRevision} (0: from now) and returns the future that
     * completes when etcd acknowledges it. Callers waiting on an older, incomplete future are
     * released by the new one.
     */
    private CompletableFuture<Void> open(long fromRevision) {
        StreamListener listener;
        synchronized (this.lifecycle) {
            CompletableFuture<Void> previous = this.created;
            this.created = new CompletableFuture<>();
            if (previous != null && !previous.isDone()) {
                this.created.whenComplete((done, failure) -> previous.complete(null));
            }
            listener = new StreamListener(++this.generation);
        }
        WatchOption.Builder option = WatchOption.builder()
            .isPrefix(true)
            .withNoPut(true)
            .withCreateNotify(true)
            .withRequireLeader(true);
        if (fromRevision > 0) {
            option.withRevision(fromRevision);
        }
        Watch.Watcher opened = this.watchClient.watch(this.keyspace.namespacePrefix(), option.build(), listener);
        Watch.Watcher stale = null;
        CompletableFuture<Void> ready;
        synchronized (this.lifecycle) {
            if (this.closed || listener.generation != this.generation) {
                stale = opened;
            }
            else {
                stale = this.watcher;
                this.watcher = opened;
            }
            ready = this.created;
        }
        if (stale != null) {
            stale.close();
        }
        return ready;
    }

    private void onEvents(WatchResponse response) {
        long revision = response.getHeader().getRevision();
        for (WatchEvent event : response.getEvents()) {
            if (event.getEventType() != WatchEvent.EventType.DELETE) {
                continue;
            }
            ByteSequence key = event.getKeyValue().getKey();
            ByteSequence root = this.keyspace.rootOf(key);
            Set<Listener> listeners = (root != null) ? this.listenersByRoot.get(root) : null;
            if (listeners != null) {
                long eventRevision = event.getKeyValue().getModRevision();
                for (Listener listener : listeners) {
                    listener.deleted(key, eventRevision);
                }
            }
            revision = Math.max(revision, event.getKeyValue().getModRevision());
        }
        synchronized (this.lifecycle) {
            this.deliveredRevision = Math.max(this.deliveredRevision, revision);
        }
    }

    private void resyncAll() {
        this.listenersByRoot.values().forEach(listeners -> listeners.forEach(Listener::resync));
    }

    /** jetcd closed the watch for good (no leader, halt error): open a new one after a pause. */
    private void reopenLater(StreamListener broken) {
        try {
            this.scheduler.schedule(() -> reopen(broken), REOPEN_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // The registry is closing: nothing to reopen.
        }
    }

    private void reopen(StreamListener broken) {
        long fromRevision;
        synchronized (this.lifecycle) {
            if (this.closed || broken.generation != this.generation) {
                return;
            }
            // Resume after the last delivered event; listeners re-read anyway in case the
            // revision was compacted meanwhile.
            fromRevision = (this.deliveredRevision > 0) ? this.deliveredRevision + 1 : 0;
        }
        open(fromRevision);
        resyncAll();
    }

    @Override
    public void close() {
        Watch.Watcher toClose;
        synchronized (this.lifecycle) {
            this.closed = true;
            toClose = this.watcher;
            this.watcher = null;
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
            if (response.isCreatedNotify()) {
                synchronized (WatchDispatcher.this.lifecycle) {
                    WatchDispatcher.this.deliveredRevision = Math.max(WatchDispatcher.this.deliveredRevision,
                            response.getHeader().getRevision());
                    if (isCurrent()) {
                        WatchDispatcher.this.created.complete(null);
                    }
                }
                return;
            }
            onEvents(response);
        }

        @Override
        public void onError(Throwable failure) {
            logger.debug("Lock watch stream interrupted: {}", EtcdCalls.describe(failure));
            synchronized (WatchDispatcher.this.lifecycle) {
                // jetcd resumes this stream: new subscribers wait for its next acknowledgement.
                if (isCurrent() && WatchDispatcher.this.created.isDone()) {
                    WatchDispatcher.this.created = new CompletableFuture<>();
                }
            }
            resyncAll();
        }

        @Override
        public void onCompleted() {
            synchronized (WatchDispatcher.this.lifecycle) {
                if (WatchDispatcher.this.closed || !isCurrent()) {
                    return;
                }
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
