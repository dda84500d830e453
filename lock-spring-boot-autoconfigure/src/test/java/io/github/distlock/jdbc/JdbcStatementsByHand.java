package io.github.distlock.jdbc;

import java.sql.SQLException;
import java.time.Duration;

import io.github.distlock.store.Wait;

/**
 * A registry's own PostgreSQL statements for one uncontended acquisition and release of a free key,
 * run on the calling thread: the single-round-trip write of the entry and the release with its
 * notification, each on a connection borrowed from the pool for it, as the registry borrows them.
 * What is left out is the registry's own machinery: its call threads, waits and local state. The
 * JDBC benchmark measures it beside the raw floor, to tell what the statements cost from what the
 * registry adds.
 */
public final class JdbcStatementsByHand {

    private static final long SESSION_WAIT_NANOS = Duration.ofSeconds(30).toNanos();

    private final JdbcLockStore store;

    private final String key;

    /**
     * @param registry a registry on PostgreSQL (the statements are its single-round-trip ones)
     * @param key a key that nobody else locks
     */
    public JdbcStatementsByHand(JdbcLockRegistry registry, String key) {
        this.store = registry.jdbc();
        this.key = key;
    }

    /**
     * Writes an entry for the key, which must find itself at the head of the queue, and releases it.
     * @throws IllegalStateException if the key was not free or the release found no entry
     */
    public void cycle() throws Exception {
        JdbcEntry entry = (JdbcEntry) this.store.newEntry(this.key, Wait.timeout(SESSION_WAIT_NANOS, false));
        JdbcCalls calls = this.store.calls();
        try {
            JdbcLockStore.Enqueued written = calls
                .withConnection((connection, tables) -> this.store.enqueueAtOnce(connection, tables, entry));
            entry.written(written.fence());
            if (written.head().fence() != written.fence()) {
                throw new IllegalStateException("'" + this.key + "' was not free: fence " + written.head().fence()
                        + " is ahead of " + written.fence());
            }
            int released = calls.withConnection((connection, tables) -> this.store.deleteEntry(connection, tables, entry));
            if (released != 1) {
                throw new IllegalStateException("The entry of '" + this.key + "' was gone before its release");
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("The statements by hand failed on '" + this.key + "'", ex);
        }
        finally {
            // As the registry's release does: the session's renewal would otherwise keep looking for it.
            entry.session.unsettled.remove(entry.number);
        }
    }
}
