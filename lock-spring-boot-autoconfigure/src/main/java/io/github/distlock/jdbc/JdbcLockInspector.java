package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.LockListing;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * The one reader of lock queues in the database, for {@link io.github.distlock.FencedLock#getHolder()},
 * {@code isLocked()}, errors, the endpoint and tools: a key's entries in fence order, each with how
 * long its session has left by the database's clock. Read-only, and not on any acquisition's path.
 */
final class JdbcLockInspector {

    private final JdbcCalls calls;

    JdbcLockInspector(JdbcCalls calls) {
        this.calls = calls;
    }

    /** {@link io.github.distlock.store.LockStore#read}, leaving out entries whose session expired. */
    LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        try {
            String lockId = JdbcTables.lockId(key);
            return this.calls.call(
                    (connection, tables) -> readQueue(connection, tables, key, lockId, maxEntries, withLeases),
                    Wait.timeout(this.calls.requestTimeoutNanos(), false), "Reading lock '" + key + "'");
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read lock '" + key + "' from " + this.calls.where() + ": "
                    + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    private LockSnapshot readQueue(Connection connection, JdbcTables tables, String key, String lockId,
            int maxEntries, boolean withLeases) throws SQLException {
        List<LockSnapshot.Entry> queued = new ArrayList<>();
        try (PreparedStatement queue = this.calls.prepare(connection, tables.queue)) {
            queue.setString(1, lockId);
            queue.setInt(2, maxEntries);
            try (ResultSet rows = queue.executeQuery()) {
                while (rows.next()) {
                    EntryValue value = EntryValue.decode(rows.getString(2));
                    long leftMillis = rows.getLong(4);
                    if (leftMillis <= 0) {
                        // Its session expired: it holds nothing, whoever deletes the session first removes it.
                        continue;
                    }
                    Duration leaseLeft = withLeases ? Duration.ofMillis(leftMillis) : null;
                    queued.add(new LockSnapshot.Entry(value.owner(), value.thread(), rows.getLong(1),
                            value.queuedAt(), rows.getString(3) + "-" + rows.getLong(5), leaseLeft));
                }
            }
        }
        return queued.isEmpty() ? new LockSnapshot(key, null, List.of())
                : new LockSnapshot(key, queued.get(0), queued.subList(1, queued.size()));
    }

    /** {@link io.github.distlock.store.LockStore#readAll}: the keys with entries, then their queues, in one call. */
    NamespaceSnapshot readAll(int maxEntries) {
        try {
            return this.calls.call((connection, tables) -> {
                Map<String, String> lockIds = new LinkedHashMap<>();
                try (PreparedStatement keys = this.calls.prepare(connection, tables.lockedKeys);
                        ResultSet rows = keys.executeQuery()) {
                    while (rows.next()) {
                        lockIds.put(JdbcTables.unescape(rows.getString(2)), rows.getString(1));
                    }
                }
                try {
                    return LockListing.list(this.calls.tablePrefix(), lockIds.keySet(), maxEntries,
                            (key, max) -> readQueueUnchecked(connection, tables, key, lockIds.get(key), max));
                }
                catch (StoreUnavailableException | InterruptedException ex) {
                    throw new SQLException(ex.getMessage(), ex);
                }
            }, Wait.timeout(this.calls.requestTimeoutNanos(), false), "Listing the locks");
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read the locks from " + this.calls.where() + ": "
                    + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
    }

    private LockSnapshot readQueueUnchecked(Connection connection, JdbcTables tables, String key,
            @Nullable String lockId, int max) throws StoreUnavailableException {
        try {
            return readQueue(connection, tables, key, (lockId != null) ? lockId : JdbcTables.lockId(key), max, true);
        }
        catch (SQLException ex) {
            throw new StoreUnavailableException("Reading lock '" + key + "' failed: " + ex.getMessage(), ex);
        }
    }
}
