package io.github.distlock.etcd;

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

    LockQueue(KV kv, WatchDispatcher dispatcher, EntryDeleter deleter, long requestTimeoutNanos,
            long safetyRecheckNanos, HoldLossHandler lossHandler) {
        this.kv = kv;
        this.dispatcher = dispatcher;
        this.deleter = deleter;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.safetyRecheckNanos = safetyRecheckNanos;
        this.lossHandler = lossHandler;
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
}
