package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.ObjLongConsumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's {@code LISTEN} for released locks: one connection of the pool per registry, taken
 * for as long as the registry lives (the one connection a registry keeps), and one thread that
 * passes each notification to the store: the fence of the next entry of a released key, or after
 * {@code q} the fence and the lock id of an entry written behind the head of its key. When the
 * connection fails it is replaced, and every waiter reads its queue again and every entry counts as
 * queued behind, since notifications sent meanwhile are lost; waiters poll on a bounded interval
 * anyway. A connection that died without either end being told (a NAT or firewall forgot it) just
 * stays silent, so after {@link #PROBE_AFTER_NANOS} without a notification a query checks it,
 * bounded by the request timeout.
 */
final class JdbcNotifications {

    private static final Logger logger = LoggerFactory.getLogger(JdbcNotifications.class);

    /** How long one wait for notifications lasts, so that close is noticed. */
    private static final int WAIT_MILLIS = 500;

    /** Pause before a failed connection is replaced; doubled up to {@link #MAX_RETRY_MILLIS}. */
    private static final long RETRY_MILLIS = 200;

    private static final long MAX_RETRY_MILLIS = 5_000;

    /** Silence after which the connection is checked: one small query per registry at most this often. */
    private static final long PROBE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final DataSource dataSource;

    private final String channel;

    private final LongConsumer notified;

    private final ObjLongConsumer<String> queuedBehind;

    private final ObjLongConsumer<String> headWritten;

    private final Runnable listening;

    private final String where;

    private final int probeTimeoutMillis;

    private final Thread thread;

    /** The pause before the next reconnection; only the listening thread uses it. */
    private long retryMillis = RETRY_MILLIS;

    /** When the current LISTEN took effect ({@link System#nanoTime()}), or 0 while there is none. */
    private volatile long listeningSince;

    private volatile boolean closed;

    /**
     * @param notified told each fence that a release named
     * @param queuedBehind told the lock id and fence of each entry written behind the head of its key
     * @param headWritten told the lock id and fence of each entry written as the head of its key
     * @param listening told each time LISTEN took effect (notifications before it may have been missed)
     * @param requestTimeoutNanos how long a check of the connection may take
     */
    JdbcNotifications(DataSource dataSource, String channel, LongConsumer notified, ObjLongConsumer<String> queuedBehind,
            ObjLongConsumer<String> headWritten, Runnable listening, String where, long requestTimeoutNanos) {
        this.dataSource = dataSource;
        this.probeTimeoutMillis = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos));
        this.channel = channel;
        this.notified = notified;
        this.queuedBehind = queuedBehind;
        this.headWritten = headWritten;
        this.listening = listening;
        this.where = where;
        this.thread = new Thread(this::run, "distlock-jdbc-listen");
        this.thread.setDaemon(true);
    }

    void start() {
        this.thread.start();
    }

    /**
     * @return when the current LISTEN took effect ({@link System#nanoTime()}), or 0 while the
     * connection is being (re)established: whatever is notified from then on is delivered
     */
    long listeningSince() {
        return this.listeningSince;
    }

    private void run() {
        while (!this.closed) {
            try (Connection listener = this.dataSource.getConnection()) {
                int networkTimeout = listener.getNetworkTimeout();
                // Bounds LISTEN, the checks and UNLISTEN: unlike a query timeout, it also ends a wait for an
                // answer that will never come.
                listener.setNetworkTimeout(Runnable::run, this.probeTimeoutMillis);
                try {
                    listen(listener);
                }
                finally {
                    JdbcCalls.restoreNetworkTimeout(listener, networkTimeout);
                }
            }
            catch (SQLException | RuntimeException ex) {
                this.listeningSince = 0;
                if (this.closed) {
                    return;
                }
                logger.debug("Listening for released locks on {} failed ({}); reconnecting", this.where,
                        ex.getMessage());
                pause(this.retryMillis);
                this.retryMillis = Math.min(2 * this.retryMillis, MAX_RETRY_MILLIS);
            }
        }
    }

    /** Listens on {@code listener} until closed; gives it back unsubscribed, with its auto-commit as it came. */
    private void listen(Connection listener) throws SQLException {
        boolean autoCommit = listener.getAutoCommit();
        if (!autoCommit) {
            listener.setAutoCommit(true);
        }
        try {
            try (Statement listen = listener.createStatement()) {
                listen.execute("LISTEN \"" + this.channel + "\"");
            }
            // Not 0, which means "none"; set before the callback, which compares entries with it.
            this.listeningSince = System.nanoTime() | 1;
            this.listening.run();
            this.retryMillis = RETRY_MILLIS;
            PGConnection postgres = listener.unwrap(PGConnection.class);
            long heardAt = System.nanoTime();
            while (!this.closed) {
                PGNotification[] notifications = postgres.getNotifications(WAIT_MILLIS);
                if (notifications != null && notifications.length > 0) {
                    heardAt = System.nanoTime();
                    for (PGNotification notification : notifications) {
                        deliver(notification.getParameter());
                    }
                }
                else if (System.nanoTime() - heardAt >= PROBE_AFTER_NANOS) {
                    // Throws if the connection died silently; it is then replaced.
                    try (Statement probe = listener.createStatement()) {
                        probe.execute("SELECT 1");
                    }
                    heardAt = System.nanoTime();
                }
            }
        }
        finally {
            // Also after a failure of this side (a callback that threw): a pooled connection still
            // subscribed would buffer every release's notification unread, and could fill the
            // server's notification queue, after which every release fails.
            unlistenOrAbort(listener);
            JdbcCalls.restoreAutoCommit(listener, autoCommit);
        }
    }

    private void unlistenOrAbort(Connection listener) {
        try (Statement unlisten = listener.createStatement()) {
            unlisten.execute("UNLISTEN \"" + this.channel + "\"");
        }
        catch (SQLException | RuntimeException ex) {
            logger.debug("UNLISTEN on {} failed ({}); closing the connection", this.where, ex.getMessage());
            try {
                listener.abort(Runnable::run);
            }
            catch (SQLException | RuntimeException abortFailed) {
                logger.debug("Aborting the listening connection to {} failed: {}", this.where,
                        abortFailed.getMessage());
            }
        }
    }

    private void deliver(String payload) {
        try {
            int colon = payload.indexOf(':');
            if (payload.startsWith("q") && colon > 1) {
                this.queuedBehind.accept(payload.substring(colon + 1), Long.parseLong(payload.substring(1, colon)));
            }
            else if (payload.startsWith("h") && colon > 1) {
                this.headWritten.accept(payload.substring(colon + 1), Long.parseLong(payload.substring(1, colon)));
            }
            else {
                this.notified.accept(Long.parseLong(payload));
            }
        }
        catch (NumberFormatException ex) {
            logger.debug("Ignoring a notification on {} that names no fence: '{}'", this.channel, payload);
        }
    }

    private void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            this.closed = true;
        }
    }

    /** Stops listening and gives the connection back to the pool. */
    void close() {
        this.closed = true;
        this.thread.interrupt();
        try {
            this.thread.join(TimeUnit.SECONDS.toMillis(2));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
