package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's {@code LISTEN} for released locks: one connection of the pool per registry, taken
 * for as long as the registry lives (the one connection a registry keeps), and one thread that
 * passes each notified fence (the next entry of a released key) to the store. When the connection
 * fails it is replaced, and every waiter reads its queue again, since notifications sent meanwhile
 * are lost; waiters poll on a bounded interval anyway.
 */
final class JdbcNotifications {

    private static final Logger logger = LoggerFactory.getLogger(JdbcNotifications.class);

    /** How long one wait for notifications lasts, so that close is noticed. */
    private static final int WAIT_MILLIS = 500;

    /** Pause before a failed connection is replaced; doubled up to {@link #MAX_RETRY_MILLIS}. */
    private static final long RETRY_MILLIS = 200;

    private static final long MAX_RETRY_MILLIS = 5_000;

    private final DataSource dataSource;

    private final String channel;

    private final LongConsumer notified;

    private final Runnable listening;

    private final String where;

    private final Thread thread;

    private volatile boolean closed;

    /**
     * @param notified told each fence that a release named
     * @param listening told each time LISTEN took effect (notifications before it may have been missed)
     */
    JdbcNotifications(DataSource dataSource, String channel, LongConsumer notified, Runnable listening, String where) {
        this.dataSource = dataSource;
        this.channel = channel;
        this.notified = notified;
        this.listening = listening;
        this.where = where;
        this.thread = new Thread(this::run, "distlock-jdbc-listen");
        this.thread.setDaemon(true);
    }

    void start() {
        this.thread.start();
    }

    private void run() {
        long retryMillis = RETRY_MILLIS;
        while (!this.closed) {
            try (Connection listener = this.dataSource.getConnection()) {
                if (!listener.getAutoCommit()) {
                    listener.setAutoCommit(true);
                }
                try (Statement listen = listener.createStatement()) {
                    listen.execute("LISTEN \"" + this.channel + "\"");
                }
                this.listening.run();
                retryMillis = RETRY_MILLIS;
                PGConnection postgres = listener.unwrap(PGConnection.class);
                while (!this.closed) {
                    PGNotification[] notifications = postgres.getNotifications(WAIT_MILLIS);
                    if (notifications == null) {
                        continue;
                    }
                    for (PGNotification notification : notifications) {
                        deliver(notification.getParameter());
                    }
                }
                try (Statement unlisten = listener.createStatement()) {
                    unlisten.execute("UNLISTEN \"" + this.channel + "\"");
                }
            }
            catch (SQLException | RuntimeException ex) {
                if (this.closed) {
                    return;
                }
                logger.debug("Listening for released locks on {} failed ({}); reconnecting", this.where,
                        ex.getMessage());
                pause(retryMillis);
                retryMillis = Math.min(2 * retryMillis, MAX_RETRY_MILLIS);
            }
        }
    }

    private void deliver(String payload) {
        try {
            this.notified.accept(Long.parseLong(payload));
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
