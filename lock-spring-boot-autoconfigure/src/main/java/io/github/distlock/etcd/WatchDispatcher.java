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

    private final Object lifecycle = new Object();

    private Watch.Watcher watcher;

    private CompletableFuture<Void> created;

    /** Revision up to which events were delivered; guarded by {@link #lifecycle}. */
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
        this.listenersByRoot.computeIfAbsent(root, r -> ConcurrentHashMap.newKeySet()).add(listener);
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

    private CompletableFuture<Void> ensureOpen() {
        synchronized (this.lifecycle) {
            if (this.closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("registry is closed"));
            }
            if (this.watcher == null) {
                open(0);
            }
            return this.created;
        }
    }

    /** Opens the watch from {@code fromRevision} (0: from now). Caller holds {@link #lifecycle}. */
    private void open(long fromRevision) {
        this.created = new CompletableFuture<>();
        StreamListener listener = new StreamListener();
        WatchOption.Builder option = WatchOption.builder()
            .isPrefix(true)
            .withNoPut(true)
            .withCreateNotify(true)
            .withRequireLeader(true);
        if (fromRevision > 0) {
            option.withRevision(fromRevision);
        }
        this.watcher = this.watchClient.watch(this.keyspace.namespacePrefix(), option.build(), listener);
        listener.watcher = this.watcher;
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
        synchronized (this.lifecycle) {
            if (this.closed || this.watcher != broken.watcher) {
                return;
            }
            // Resume after the last delivered event; listeners re-read anyway in case the
            // revision was compacted meanwhile.
            open(this.deliveredRevision > 0 ? this.deliveredRevision + 1 : 0);
        }
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

        private volatile Watch.Watcher watcher;

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
            return this.watcher == null || this.watcher == WatchDispatcher.this.watcher;
        }
    }
}
