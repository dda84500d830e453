package io.github.distlock.etcd;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.KV;

/** What the queue entries of one registry share: clients, bounds and the loss callback. */
final class LockQueue {

    /** Told when a held entry is lost (lease ended, key deleted). Must not block. */
    interface HoldLossHandler {

        void holdLost(QueueEntry entry, String reason);
    }

    private final KV kv;

    private final WatchDispatcher dispatcher;

    private final EntryDeleter deleter;

    private final long requestTimeoutNanos;

    private final long safetyRecheckNanos;

    private final HoldLossHandler lossHandler;

    private final Runnable uncertainWriteHandler;

    private final RaftTerms terms;

    private final EntrySlots slots = new EntrySlots();

    private final ScheduledExecutorService maintenance;

    private final BackendFailures failures;

    LockQueue(KV kv, WatchDispatcher dispatcher, EntryDeleter deleter, long requestTimeoutNanos,
            long safetyRecheckNanos, RaftTerms terms, HoldLossHandler lossHandler, Runnable uncertainWriteHandler,
            ScheduledExecutorService maintenance, BackendFailures failures) {
        this.maintenance = maintenance;
        this.failures = failures;
        this.kv = kv;
        this.dispatcher = dispatcher;
        this.deleter = deleter;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.safetyRecheckNanos = safetyRecheckNanos;
        this.lossHandler = lossHandler;
        this.uncertainWriteHandler = uncertainWriteHandler;
        this.terms = terms;
    }

    /** Runs {@code task} on the maintenance thread after {@code delayNanos}; nothing once the registry closed. */
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
        return this.kv;
    }

    WatchDispatcher dispatcher() {
        return this.dispatcher;
    }

    EntryDeleter deleter() {
        return this.deleter;
    }

    long requestTimeoutNanos() {
        return this.requestTimeoutNanos;
    }

    /** How long a waiter trusts the watch alone before re-reading the queue anyway. */
    long safetyRecheckNanos() {
        return this.safetyRecheckNanos;
    }

    void holdLost(QueueEntry entry, String reason) {
        this.lossHandler.holdLost(entry, reason);
    }

    /**
     * An entry write failed without an answer: etcd may still apply it later (a deposed leader's
     * proposal committed by its successor), after every delete of ours.
     */
    void uncertainWrite() {
        this.uncertainWriteHandler.run();
    }
}
