package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreEvents;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removing rows nobody will release, in the background: what is left of entries that gave up or
 * were lost (retried until the database confirms or the entry's session ended), rows of this
 * process's session that no acquisition owns (ghosts), sessions this process gave up, and, in
 * sweeps, expired sessions of any process and the rows of keys that have had no entry for
 * {@link JdbcTables#IDLE_KEY_RETENTION} by the database's clock (a key's row keeps its last fence,
 * so that a step back of the clock shorter than that cannot lower the key's next fence).
 */
final class JdbcEntryRemovals {

    private static final Logger logger = LoggerFactory.getLogger(JdbcEntryRemovals.class);

    /** Pause before a removal the database did not confirm is tried again; doubled up to the next bound. */
    private static final long REMOVAL_RETRY_MILLIS = 500;

    private static final long MAX_REMOVAL_RETRY_MILLIS = 5_000;

    /** How often the rows of idle keys are deleted. */
    private static final long IDLE_KEY_SWEEP_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** Batches of {@link JdbcTables#SWEEP_BATCH} rows one sweep deletes at most. */
    private static final int MAX_SWEEP_BATCHES = 40;

    private final JdbcCalls calls;

    private final JdbcWakeups wakeups;

    /** The store's scheduler, for retries; never blocks on the database. */
    private final ScheduledExecutorService maintenance;

    private final StoreEvents statistics;

    private final AtomicInteger pendingRemovals = new AtomicInteger();

    private final AtomicBoolean sweeping = new AtomicBoolean();

    /**
     * Removals of given-up entries that the database has not confirmed yet, by lock id. They run on
     * another connection than the process's next acquisition of the key, which could otherwise find
     * its own leftover ahead of it (G8); that acquisition waits for them first, within its attempt.
     */
    private final Map<String, CompletableFuture<Void>> givenUp = new ConcurrentHashMap<>();

    /** When the next sweep also deletes idle keys: the first sweep does (nanoTime may be negative, so not 0). */
    private volatile long nextIdleKeySweep = System.nanoTime();

    JdbcEntryRemovals(JdbcCalls calls, JdbcWakeups wakeups, ScheduledExecutorService maintenance,
            StoreEvents statistics) {
        this.calls = calls;
        this.wakeups = wakeups;
        this.maintenance = maintenance;
        this.statistics = statistics;
    }

    /**
     * Removes what is left of an entry, in the background, until the database answers or the
     * entry's session ended (its rows go with the session). An entry whose write had no answer is
     * removed by its number, which needs no fence.
     */
    void removeLater(JdbcEntry entry) {
        this.pendingRemovals.incrementAndGet();
        removeAttempt(entry, null, REMOVAL_RETRY_MILLIS);
    }

    /**
     * Removes what is left of an entry whose acquisition gave up and waits briefly for the
     * database to confirm, so that the next acquisition (in any process) does not find it in its
     * way; if the database does not confirm in time, removal goes on as for {@link #removeLater}.
     * Does not wait past {@code attempt}: an acquisition returns within its wait (or, for a try-once,
     * its first attempt's bound).
     */
    void removeBeforeReturning(JdbcEntry entry, Wait attempt) {
        this.pendingRemovals.incrementAndGet();
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        // Invariant: a lock id maps to a future that completes once every give-up merged into it was
        // confirmed, and is unmapped then unless a later give-up replaced it.
        CompletableFuture<Void> tracked = this.givenUp.merge(entry.lockId, confirmed,
                (earlier, later) -> CompletableFuture.allOf(earlier, later));
        tracked.whenComplete((done, never) -> this.givenUp.remove(entry.lockId, tracked));
        removeAttempt(entry, confirmed, REMOVAL_RETRY_MILLIS);
        if (!StoreCalls.awaitGiveUpConfirmation(confirmed, attempt, this.calls.requestTimeoutNanos())) {
            logger.debug("Removal of lock entry {} not confirmed within the acquisition's bound; it goes on in the "
                    + "background", entry.fence());
        }
    }

    /**
     * Waits, within {@code attempt}, for the removals of this process's given-up entries of the key
     * that the database has not confirmed yet (see {@link #givenUp}); goes on if they take longer.
     */
    void awaitGivenUp(String lockId, Wait attempt) {
        CompletableFuture<Void> pending = this.givenUp.get(lockId);
        if (pending == null) {
            return;
        }
        try {
            StoreCalls.await(pending.copy(), attempt.atMost(this.calls.requestTimeoutNanos()).interruptible(false),
                    "Removing an earlier entry of the lock");
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            // Queues behind it: its removal goes on, and wakes this entry once done.
        }
    }

    private void removeAttempt(JdbcEntry entry, @Nullable CompletableFuture<Void> confirmed, long nextDelayMillis) {
        if (entry.session.lostReason() != null && !this.calls.isClosed()) {
            // The session's rows are deleted with it, by whoever finds it expired.
            this.pendingRemovals.decrementAndGet();
            if (confirmed != null) {
                confirmed.complete(null);
            }
            return;
        }
        CompletableFuture<Integer> delete = deleteByNumber(entry.session, entry.number, entry.lockId)
                .orTimeout(this.calls.requestTimeoutNanos(), TimeUnit.NANOSECONDS);
        delete.whenComplete((removed, failure) -> {
            if (failure == null) {
                this.pendingRemovals.decrementAndGet();
                entry.session.unsettled.remove(entry.number);
                if (removed > 0) {
                    this.wakeups.wakeLocalWaiters(entry.lockId);
                }
                if (confirmed != null) {
                    confirmed.complete(null);
                }
            }
            else {
                this.statistics.backendError();
                retryRemoval(entry, confirmed, nextDelayMillis);
            }
        });
    }

    /**
     * Deletes the row of {@code session} numbered {@code number}, whether or not its fence is known;
     * on PostgreSQL, notifies the next entry if it was the key's oldest.
     * @return the rows deleted
     */
    private CompletableFuture<Integer> deleteByNumber(JdbcSession session, long number, String lockId) {
        return this.calls.submit((connection, tables) -> {
            // Commits in the round trip that deletes: see JdbcCalls.autoCommitForOneRoundTrip.
            JdbcCalls.autoCommitForOneRoundTrip(connection);
            String notifying = tables.deleteEntryByNumberAndNotify;
            if (notifying == null) {
                try (PreparedStatement delete = this.calls.prepare(connection, tables.deleteEntryByNumber)) {
                    delete.setString(1, session.id);
                    delete.setLong(2, number);
                    return delete.executeUpdate();
                }
            }
            try (PreparedStatement delete = this.calls.prepare(connection, notifying)) {
                delete.setString(1, lockId);
                delete.setString(2, session.id);
                delete.setLong(3, number);
                delete.setString(4, tables.channel);
                return JdbcCalls.countOfSecondStatement(delete, "removal");
            }
        });
    }

    private void retryRemoval(JdbcEntry entry, @Nullable CompletableFuture<Void> confirmed, long delayMillis) {
        try {
            this.maintenance.schedule(() -> removeAttempt(entry, confirmed, Math.min(2 * delayMillis,
                    MAX_REMOVAL_RETRY_MILLIS)), delayMillis, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed meanwhile: the entry goes with its session, which nobody renews now.
            this.pendingRemovals.decrementAndGet();
        }
    }

    /** @return removals not yet confirmed by the database (nor made moot by the session's end) */
    int pendingRemovals() {
        return this.pendingRemovals.get();
    }

    /** Runs {@link #sweep} on a store thread, one at a time, so that a slow sweep never delays a renewal. */
    void sweepLater() {
        if (!this.sweeping.compareAndSet(false, true)) {
            return;
        }
        try {
            this.calls.execute(() -> {
                try {
                    sweep();
                }
                catch (SQLException | RuntimeException ex) {
                    logger.debug("Sweeping expired lock sessions failed: {}", ex.getMessage());
                }
                finally {
                    this.sweeping.set(false);
                }
            });
        }
        catch (RejectedExecutionException ex) {
            this.sweeping.set(false);
        }
    }

    /**
     * Deletes a row of {@code session} that no acquisition owns, in the background, waking the
     * entry after it as a release would (on PostgreSQL other processes' too, if it was the oldest).
     */
    void removeGhost(JdbcSession session, long number, String lockId) {
        logger.debug("Deleting lock entry {} of session {}: no acquisition owns it", number, session.id);
        deleteByNumber(session, number, lockId).whenComplete((deleted, failure) -> {
            if (failure == null && deleted > 0) {
                this.wakeups.wakeLocalWaiters(lockId);
            }
        });
    }

    /**
     * Deletes a session this process gave up, with its entries, retried until the database
     * confirms: the database may still count it alive (a renewal that executed after its
     * deadline here), and its entries would then hold their keys for up to another TTL.
     */
    void deleteSessionLater(JdbcSession lost) {
        deleteSessionAttempt(lost, REMOVAL_RETRY_MILLIS);
    }

    /** Retries back off as the removals' do, so that a database down for long is not asked twice a second. */
    private void deleteSessionAttempt(JdbcSession lost, long nextDelayMillis) {
        this.calls.submit((connection, tables) -> deleteSession(connection, tables, lost.id, false))
            .whenComplete((deleted, failure) -> {
                if (failure == null && deleted > 0) {
                    // A session started since may have entries queued behind the lost one's, in this process.
                    this.wakeups.wakeAll();
                }
                else if (failure != null && !this.calls.isClosed()) {
                    try {
                        this.maintenance.schedule(() -> deleteSessionAttempt(lost, Math.min(2 * nextDelayMillis,
                                MAX_REMOVAL_RETRY_MILLIS)), nextDelayMillis, TimeUnit.MILLISECONDS);
                    }
                    catch (RejectedExecutionException ex) {
                        // Closed meanwhile: the session expires on its own.
                    }
                }
            });
    }

    /**
     * Deletes a session with its entries in a transaction of its own; on PostgreSQL, in the same
     * transaction, notifies the entry that becomes the oldest of each key whose oldest entry was
     * the session's (see {@link JdbcTables#deleteSessionAndNotify}), so that waiters of every
     * process behind the session's entries are woken at once, not at their next poll.
     * @param onlyIfExpired whether to delete it only if its time has passed by the database's clock
     * @return the sessions deleted: 1, or 0 if it was gone (or, with {@code onlyIfExpired}, alive)
     */
    int deleteSession(Connection connection, JdbcTables tables, String sessionId, boolean onlyIfExpired)
            throws SQLException {
        JdbcCalls.autoCommitForOneRoundTrip(connection);
        String notifying = onlyIfExpired ? tables.deleteExpiredSessionAndNotify : tables.deleteSessionAndNotify;
        if (notifying == null) {
            try (PreparedStatement delete = this.calls.prepare(connection,
                    onlyIfExpired ? tables.deleteExpiredSession : tables.deleteSession)) {
                delete.setString(1, sessionId);
                return delete.executeUpdate();
            }
        }
        try (PreparedStatement delete = this.calls.prepare(connection, notifying)) {
            delete.setString(1, sessionId);
            delete.setString(2, sessionId);
            delete.setString(3, tables.channel);
            return JdbcCalls.countOfSecondStatement(delete, "deletion of a session");
        }
    }

    /**
     * Deletes expired sessions (with their entries) and, now and then, the rows of keys without
     * entries: found by a plain read and deleted by their keys, so that the sweep locks only what it
     * deletes (see {@link JdbcTables#SWEEP_BATCH}).
     */
    private void sweep() throws SQLException {
        int sessions;
        try {
            sessions = this.calls.withConnection((connection, tables) -> deleteFound(connection, tables,
                    tables.expiredSessions, null, 1, (ids) -> deleteSession(connection, tables, ids.get(0), true)));
        }
        catch (SQLException ex) {
            // Sessions deleted before the failure took their entries with them.
            this.wakeups.wakeAll();
            throw ex;
        }
        if (sessions > 0) {
            logger.debug("Deleted {} expired lock session(s) and their entries", sessions);
            this.wakeups.wakeAll();
        }
        long now = System.nanoTime();
        if (now - this.nextIdleKeySweep >= 0) {
            this.nextIdleKeySweep = now + IDLE_KEY_SWEEP_NANOS
                    + ThreadLocalRandom.current().nextLong(IDLE_KEY_SWEEP_NANOS / 4);
            long retentionMicros = TimeUnit.NANOSECONDS.toMicros(JdbcTables.IDLE_KEY_RETENTION.toNanos());
            int keys = this.calls.withConnection((connection, tables) -> deleteFound(connection, tables,
                    tables.idleKeys, retentionMicros, tables.idleKeysPerDelete,
                    (ids) -> deleteGroup(connection, tables.deleteIdleKeys, ids, tables.idleKeysPerDelete,
                            retentionMicros)));
            logger.debug("Deleted {} idle lock key row(s)", keys);
        }
    }

    /** Deletes rows by their ids, checking again what the read that found them found. */
    @FunctionalInterface
    private interface GroupDelete {

        /** @return the rows deleted */
        int delete(List<String> ids) throws SQLException;
    }

    /**
     * Deletes the rows whose ids {@code find} answers, {@code perDelete} ids to a {@code delete}
     * (which checks again what the read found), batch after batch while batches come full and
     * something was deleted (at most {@link #MAX_SWEEP_BATCHES}, so that keys created faster than
     * one batch a sweep do not pile up). Each statement runs in a transaction of its own.
     * @param findParameter the one parameter of {@code find}, or {@code null} if it has none
     * @return the rows deleted
     */
    private int deleteFound(Connection connection, JdbcTables tables, String find, @Nullable Long findParameter,
            int perDelete, GroupDelete delete) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.setAutoCommit(true);
        }
        int deleted = 0;
        for (int batch = 0; batch < MAX_SWEEP_BATCHES; batch++) {
            List<String> ids = new ArrayList<>();
            try (PreparedStatement select = this.calls.prepare(connection, find)) {
                if (findParameter != null) {
                    select.setLong(1, findParameter);
                }
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        ids.add(rows.getString(1));
                    }
                }
            }
            int deletedNow = 0;
            for (int from = 0; from < ids.size(); from += perDelete) {
                List<String> group = ids.subList(from, Math.min(from + perDelete, ids.size()));
                try {
                    deletedNow += delete.delete(group);
                }
                catch (SQLException ex) {
                    if (!isLeftForNextTime(ex, tables)) {
                        throw ex;
                    }
                    if (group.size() == 1) {
                        logger.debug("The sweep left {} for next time: {}", group.get(0), ex.getMessage());
                        continue;
                    }
                    // One row refused undoes its group: the others go one by one.
                    for (String id : group) {
                        try {
                            deletedNow += delete.delete(List.of(id));
                        }
                        catch (SQLException single) {
                            if (!isLeftForNextTime(single, tables)) {
                                throw single;
                            }
                            logger.debug("The sweep left {} for next time: {}", id, single.getMessage());
                        }
                    }
                }
            }
            deleted += deletedNow;
            if (ids.size() < JdbcTables.SWEEP_BATCH || deletedNow == 0) {
                break;
            }
        }
        return deleted;
    }

    /**
     * @return the rows {@code delete} deleted for {@code ids}, the last of which fills its unused
     * parameters; {@code retentionMicros} is its last parameter
     */
    private int deleteGroup(Connection connection, String delete, List<String> ids, int parameters,
            long retentionMicros) throws SQLException {
        try (PreparedStatement statement = this.calls.prepare(connection, delete)) {
            for (int i = 0; i < parameters; i++) {
                // Repeated rather than a shorter statement: one statement text, prepared once.
                statement.setString(i + 1, ids.get(Math.min(i, ids.size() - 1)));
            }
            statement.setLong(parameters + 1, retentionMicros);
            return statement.executeUpdate();
        }
    }

    /** @return whether a sweep's delete was refused for an entry written meanwhile (the foreign key) or a deadlock */
    private static boolean isLeftForNextTime(SQLException ex, JdbcTables tables) {
        return JdbcCalls.isForeignKeyViolation(ex) || JdbcCalls.isTransient(ex, tables.dialect());
    }
}
