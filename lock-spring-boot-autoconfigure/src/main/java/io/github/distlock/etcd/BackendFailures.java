package io.github.distlock.etcd;

import io.github.distlock.store.StoreEvents;

/**
 * Where every failed etcd call is reported: counted for the statistics, and the client's channel
 * told to reconnect without waiting out its backoff. Also asked before calls that usually follow
 * a failure (granting a new session lease), so that they do not wait for a backoff to end.
 */
final class BackendFailures {

    private final StoreEvents statistics;

    private final ChannelReconnect reconnect;

    BackendFailures(StoreEvents statistics, ChannelReconnect reconnect) {
        this.statistics = statistics;
        this.reconnect = reconnect;
    }

    /** After a failed etcd call. */
    void record() {
        this.statistics.backendError();
        this.reconnect.now();
    }

    /** Before the first call after etcd may have been unreachable. */
    void beforeReconnect() {
        this.reconnect.now();
    }
}
