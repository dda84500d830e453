package io.github.distlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

import io.github.distlock.store.KeyEscaper;
import org.jspecify.annotations.Nullable;

/**
 * Where a registry's locks live in the database, and every statement the store runs on them. Three
 * tables share the prefix:
 * <ul>
 * <li>{@code <prefix>SESSION}: one row per live registry session; {@code EXPIRES_AT} is computed by
 * the database's clock (epoch milliseconds) and pushed forward by each renewal while it has not
 * passed. A session whose time has passed is dead for good: renewals no longer match it, and
 * whoever deletes it first (a waiter behind one of its entries, or any registry's sweep) removes
 * its entries with it ({@code ON DELETE CASCADE}).</li>
 * <li>{@code <prefix>LOCK_KEY}: one row per key that has entries or had one within the idle-key
 * retention, addressed by the SHA-256 of the escaped key ({@code LOCK_ID}; keys of any length and
 * collation-proof) and holding the escaped key for people and tools, and {@code LAST_FENCE}, the
 * last fence issued for the key. An acquisition writes its entry while holding this row's lock, so
 * entries of one key commit in the order of their fences, and sets {@code LAST_FENCE} to the entry's
 * fence in the same transaction. The sweep deletes a row only when the key has no entry and
 * {@code LAST_FENCE} is older than the retention by the database's clock.</li>
 * <li>{@code <prefix>ENTRY}: one row per acquisition; {@code FENCE} orders the queue, and the oldest
 * entry of a key holds it. The fence is the database's clock in microseconds when the entry is
 * written, raised above the key's {@code LAST_FENCE} and its newest entry where the clock is behind
 * them (it stepped back), so that the queue's order stays the order of the writes and the key's
 * fences strictly increase also across times when it has no entry; where that value is another
 * key's entry's (written in the same microsecond, or raised to the same value), above every entry.
 * So fences never repeat and never go back when the database forgets what it wrote (a failover to a
 * replica that lagged, a restore of a backup), as a sequence's would, as long as its clock is not
 * behind them then; and a step back of the clock lowers no key's fence unless the key's row was
 * deleted before it: the key had no entry and its clock had run past its last fence by more than the
 * retention, so only a step back by more than the retention can. {@code ENTRY_VALUE} names the
 * writer ({@code owner}, {@code thread}, epoch milliseconds, one per line).</li>
 * </ul>
 * In the escaped key {@code %} becomes {@code %25} and lone surrogates and NUL {@code %uXXXX}, so it
 * is valid text in every database and distinct keys stay distinct.
 */
final class JdbcTables {

    /** The default prefix; the schema scripts are written with it. */
    static final String DEFAULT_PREFIX = "DISTRIBUTED_LOCK_";

    private static final Pattern PREFIX = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*");

    /**
     * Rows a sweep reads at a time: a sweep finds its rows with a plain read and deletes them by
     * their keys, because on InnoDB a DELETE that scans for its rows locks every row it reads (those
     * in use too) until it commits.
     */
    static final int SWEEP_BATCH = 500;

    /**
     * How long a key's row stays after its last fence, by the database's clock, when the key has no
     * entry: its {@code LAST_FENCE} keeps the key's next fence above its last, so a step back of the
     * database's clock by up to this much cannot lower a key's fence (G3). A day: far beyond a step
     * that NTP or an operator makes by mistake, and it costs one small row per key used within it.
     */
    static final Duration IDLE_KEY_RETENTION = Duration.ofHours(24);

    /** Idle keys one statement deletes where that locks only them (see {@link #idleKeysPerDelete}). */
    static final int IDLE_KEYS_PER_DELETE = 100;

    private static final KeyEscaper ESCAPER = new KeyEscaper("", c -> c == 0);

    private final JdbcDialect dialect;

    final String sessions;

    final String keys;

    final String entries;

    /** (lock id, escaped key): creates and locks the key's row. */
    final String lockKeyRow;

    /**
     * MySQL, MariaDB and H2 (lock id, escaped key): {@link #lockKeyRow}, which also reserves the key's
     * next fence in its {@code LAST_FENCE}: the database's clock, or one above the last fence if the
     * clock is behind it. A new row starts at the clock.
     */
    final @Nullable String lockKeyRowReservingFence;

    /** (lock id, lock id, session id, entry number, value): writes an entry at the fence its key row reserved. */
    final String insertEntryAtReservedFence;

    /** (fence, lock id, session id, entry number, value): writes an entry at the fence given. */
    final String insertEntryAt;

    /** (fence, lock id): sets the key's last fence to an entry's that went above the reserved one. */
    final String setLastFence;

    /**
     * (session id, entry number): the oldest entry of the key of an entry just written, with its
     * session and the milliseconds its session has left, then the new entry's fence and the newest
     * fence of the key's other entries ({@code null} if none). If the new entry is the newest of its
     * key, the oldest one is the head of the queue up to it.
     */
    final String newEntryAndHead;

    /** The newest fence of all entries ({@code null} if none). */
    final String newestFence;

    /** (fence, session id, entry number): moves an entry written in the same transaction to another fence. */
    final String moveEntry;

    /**
     * (lock id, fence): the oldest entry of the key at or before the fence, with its session and the
     * milliseconds its session has left by the database's clock.
     */
    final String head;

    /** (lock id, max rows): the key's entries, oldest first, with their sessions' milliseconds left. */
    final String queue;

    /** The keys that have entries: lock id and escaped key. */
    final String lockedKeys;

    /** (session id, owner, TTL ms, TTL ms): starts a session. */
    final String insertSession;

    /** (TTL ms, session id): renews a session that has not expired. */
    final String renewSession;

    /** (session id): the fences, numbers and lock ids of a session's entries. */
    final String sessionEntries;

    /** (session id): deletes a session whose time has passed, with its entries. */
    final String deleteExpiredSession;

    /** The ids of sessions whose time has passed, at most {@link #SWEEP_BATCH}. */
    final String expiredSessions;

    /** (session id): deletes a session and its entries. */
    final String deleteSession;

    /**
     * PostgreSQL only (session id, session id, channel): {@link #deleteSession} as two statements
     * sent at once, in one transaction at READ COMMITTED (see {@link #atReadCommitted}), which wakes
     * the waiters behind the session's entries: the first takes the row locks of the keys the session has entries of, in one order
     * (so that two such deletions do not deadlock), so that the second sees every entry of those
     * keys committed before; the second deletes the session and, for each key whose oldest entry
     * was one of the session's, notifies the channel with the fence of the key's oldest entry of
     * another session, if any; it answers the sessions deleted. The entries go by the cascade.
     * <p>
     * An entry of the session itself that commits between the two statements (a write sent before
     * its process gave the session up) is deleted by the cascade without a notification: whoever
     * queued behind it in that moment learns at its next poll.
     */
    final @Nullable String deleteSessionAndNotify;

    /**
     * PostgreSQL only (session id, session id, channel): {@link #deleteExpiredSession} as
     * {@link #deleteSessionAndNotify}.
     */
    final @Nullable String deleteExpiredSessionAndNotify;

    /**
     * (retention µs): the ids of keys that have no entries and whose last fence is older than the
     * retention by the database's clock, at most {@link #SWEEP_BATCH}.
     */
    final String idleKeys;

    /**
     * ({@link #idleKeysPerDelete} lock ids, retention µs): deletes the rows of those keys that have
     * no entries and whose last fence is older than the retention by the database's clock.
     */
    final String deleteIdleKeys;

    /**
     * Idle keys one statement deletes: {@link #IDLE_KEYS_PER_DELETE}, but one on InnoDB, where the
     * optimizer may scan the table for a list of keys (locking every row it reads) and the check for
     * entries takes gap locks that an acquisition's insert waits for, while the delete may wait for
     * that acquisition's key row: a deadlock.
     */
    final int idleKeysPerDelete;

    /** (fence, session id): releases an entry. */
    final String deleteEntry;

    /**
     * PostgreSQL only (lock id, fence, session id, channel, fence): two statements sent at once, in
     * one transaction ({@link #atReadCommitted}): the first takes the key row's lock, so that an
     * entry being written commits before the second reads; the second releases the entry and
     * notifies the channel with the fence of the next entry of the key, if any, and answers the rows
     * deleted. Without the lock, a release could miss an entry committed while it ran, and that
     * waiter would sleep until it polls.
     * <p>
     * The first also sets {@code synchronous_commit} off for this transaction alone: the release
     * commits (and is seen, and notifies) without waiting for its WAL to reach the disk, which is
     * half of an uncontended cycle's fsyncs. Only liveness rests on a release being durable: no row
     * is ever written this way, and the next synchronous commit on the server (any acquisition's
     * write, a renewal) flushes the release first. A release that a crash of the database (or a
     * failover, since it does not wait for a synchronous standby either) loses before that comes
     * back as a row of its session whose number is settled: no process acts on it, a waiter that took
     * the key before the crash keeps it, later ones queue behind it, and tools show it as the holder
     * until that session's next renewal deletes it as a ghost ({@link JdbcSessionKeeper}), or its
     * session ends with it.
     */
    final @Nullable String deleteEntryAndNotify;

    /** PostgreSQL only: the writes of {@link #enqueueAtOnce}, by whether they tell older entries and go above all. */
    private final @Nullable String[] enqueueAtOnceVariants;

    /** (session id, entry number): removes an entry whose fence may be unknown. */
    final String deleteEntryByNumber;

    /**
     * PostgreSQL only (lock id, session id, entry number, channel): removes an entry whose fence may
     * be unknown as {@link #deleteEntryAndNotify} releases one, under the key row's lock, and if it
     * was the oldest entry of its key (the holder, or next when it gave up) notifies the entry after
     * it; answers the rows deleted. Without it, that entry would sleep until it polls.
     */
    final @Nullable String deleteEntryByNumberAndNotify;

    /** The channel of {@code LISTEN/NOTIFY}: the prefix in lower case, then {@code released}; quoted where named. */
    final String channel;

    JdbcTables(String prefix, JdbcDialect dialect) {
        String problem = prefixProblem(prefix);
        if (problem != null) {
            throw new IllegalArgumentException("JDBC table prefix " + problem);
        }
        prefix = normalize(prefix);
        this.dialect = dialect;
        this.sessions = prefix + "SESSION";
        this.keys = prefix + "LOCK_KEY";
        this.entries = prefix + "ENTRY";
        String now = dialect.nowMillis();
        this.lockKeyRow = dialect.lockKeyRow(this.keys);
        this.lockKeyRowReservingFence = dialect.lockKeyRowReservingFence(this.keys);
        String insertEntryAt = "INSERT INTO " + this.entries + " (FENCE, LOCK_ID, SESSION_ID, ENTRY_NUMBER, "
                + "ENTRY_VALUE) VALUES (%s, ?, ?, ?, ?)";
        this.insertEntryAtReservedFence = insertEntryAt.formatted("(SELECT LAST_FENCE FROM " + this.keys
                + " WHERE LOCK_ID = ?)");
        this.insertEntryAt = insertEntryAt.formatted("?");
        this.setLastFence = "UPDATE " + this.keys + " SET LAST_FENCE = ? WHERE LOCK_ID = ?";
        String keyHead = "SELECT e.FENCE, e.ENTRY_VALUE, e.SESSION_ID, s.EXPIRES_AT - " + now + " AS LEFT_MS FROM "
                + this.entries + " e JOIN " + this.sessions + " s ON s.SESSION_ID = e.SESSION_ID "
                + "WHERE e.LOCK_ID = ? ORDER BY e.FENCE LIMIT 1";
        this.head = keyHead.replace("WHERE e.LOCK_ID = ?", "WHERE e.LOCK_ID = ? AND e.FENCE <= ?");
        this.newEntryAndHead = "SELECT h.FENCE, h.ENTRY_VALUE, h.SESSION_ID, s.EXPIRES_AT - " + now + " AS LEFT_MS, "
                + "n.FENCE, (SELECT MAX(o.FENCE) FROM " + this.entries + " o WHERE o.LOCK_ID = n.LOCK_ID AND "
                + "o.FENCE <> n.FENCE) FROM " + this.entries + " n JOIN " + this.entries
                + " h ON h.LOCK_ID = n.LOCK_ID JOIN " + this.sessions + " s ON s.SESSION_ID = h.SESSION_ID WHERE n.SESSION_ID = ? AND "
                + "n.ENTRY_NUMBER = ? ORDER BY h.FENCE LIMIT 1";
        this.newestFence = "SELECT MAX(FENCE) FROM " + this.entries;
        this.moveEntry = "UPDATE " + this.entries + " SET FENCE = ? WHERE SESSION_ID = ? AND ENTRY_NUMBER = ?";
        this.queue = "SELECT e.FENCE, e.ENTRY_VALUE, e.SESSION_ID, s.EXPIRES_AT - " + now + " AS LEFT_MS, "
                + "e.ENTRY_NUMBER FROM " + this.entries + " e JOIN " + this.sessions
                + " s ON s.SESSION_ID = e.SESSION_ID WHERE e.LOCK_ID = ? ORDER BY e.FENCE LIMIT ?";
        this.lockedKeys = "SELECT k.LOCK_ID, k.LOCK_KEY FROM " + this.keys + " k WHERE EXISTS (SELECT 1 FROM "
                + this.entries + " e WHERE e.LOCK_ID = k.LOCK_ID)";
        this.insertSession = "INSERT INTO " + this.sessions + " (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                + "VALUES (?, ?, " + now + " + ?, ?)";
        this.renewSession = "UPDATE " + this.sessions + " SET EXPIRES_AT = " + now + " + ? WHERE SESSION_ID = ? "
                + "AND EXPIRES_AT > " + now;
        this.sessionEntries = "SELECT FENCE, ENTRY_NUMBER, LOCK_ID FROM " + this.entries + " WHERE SESSION_ID = ?";
        this.deleteExpiredSession = "DELETE FROM " + this.sessions + " WHERE SESSION_ID = ? AND EXPIRES_AT <= " + now;
        this.expiredSessions = "SELECT SESSION_ID FROM " + this.sessions + " WHERE EXPIRES_AT <= " + now + " LIMIT "
                + SWEEP_BATCH;
        this.deleteSession = "DELETE FROM " + this.sessions + " WHERE SESSION_ID = ?";
        this.deleteSessionAndNotify = dialect.hasNotifications() ? atReadCommitted(deleteSessionAndNotify("")) : null;
        this.deleteExpiredSessionAndNotify = dialect.hasNotifications()
                ? atReadCommitted(deleteSessionAndNotify(" AND EXPIRES_AT <= " + now)) : null;
        // Idle: no entries, and the last fence older than the retention (a parameter, in µs) by the clock.
        String idle = " NOT EXISTS (SELECT 1 FROM " + this.entries + " e WHERE e.LOCK_ID = " + this.keys
                + ".LOCK_ID) AND LAST_FENCE < " + dialect.nowMicros() + " - ?";
        this.idleKeys = "SELECT LOCK_ID FROM " + this.keys + " WHERE" + idle + " LIMIT " + SWEEP_BATCH;
        this.idleKeysPerDelete = (dialect == JdbcDialect.MYSQL) ? 1 : IDLE_KEYS_PER_DELETE;
        this.deleteIdleKeys = "DELETE FROM " + this.keys + " WHERE LOCK_ID IN ("
                + String.join(", ", Collections.nCopies(this.idleKeysPerDelete, "?")) + ") AND" + idle;
        this.deleteEntry = "DELETE FROM " + this.entries + " WHERE FENCE = ? AND SESSION_ID = ?";
        String lockKeyRowFirst = "SELECT LOCK_ID FROM " + this.keys + " WHERE LOCK_ID = ? FOR UPDATE; ";
        this.deleteEntryAndNotify = dialect.hasNotifications()
                ? atReadCommitted("SELECT set_config('synchronous_commit', 'off', true) FROM " + this.keys
                        + " WHERE LOCK_ID = ? FOR UPDATE; "
                        + "WITH released AS (DELETE FROM " + this.entries + " WHERE FENCE = ? AND SESSION_ID = ? "
                        + "RETURNING LOCK_ID) SELECT (SELECT COUNT(*) FROM released), (SELECT pg_notify(?, "
                        + "MIN(e.FENCE)::TEXT) FROM " + this.entries + " e WHERE e.LOCK_ID IN "
                        + "(SELECT LOCK_ID FROM released) AND e.FENCE > ? HAVING MIN(e.FENCE) IS NOT NULL)")
                : null;
        this.enqueueAtOnceVariants = new String[4];
        if (dialect == JdbcDialect.POSTGRESQL) {
            for (int variant = 0; variant < 4; variant++) {
                boolean aboveEveryEntry = (variant & 1) != 0;
                // GREATEST ignores a NULL: the clock and the key's last fence alone for a key without entries.
                String aboveAll = aboveEveryEntry ? ", (SELECT MAX(FENCE) + 1 FROM " + this.entries + ")" : "";
                String fence = "GREATEST(" + dialect.nowMicros() + ", (SELECT MAX(FENCE) + 1 FROM " + this.entries
                        + " WHERE LOCK_ID = ?), (SELECT LAST_FENCE + 1 FROM " + this.keys + " WHERE LOCK_ID = ?)"
                        + aboveAll + ")";
                // The key's row, locked by the first statement, takes the entry's fence as its last in the same
                // statement that writes the entry: no round trip of its own.
                String writeEntry = this.lockKeyRow + "; WITH n AS (" + insertEntryAt.formatted(fence)
                        + " RETURNING FENCE, LOCK_ID), kept AS (UPDATE " + this.keys + " AS k SET LAST_FENCE = n.FENCE "
                        + "FROM n WHERE k.LOCK_ID = n.LOCK_ID) SELECT FENCE FROM n; ";
                this.enqueueAtOnceVariants[variant] = atReadCommitted(((variant & 2) == 0) ? writeEntry + keyHead
                        : writeEntry + "SELECT h.*, pg_notify(?, CASE WHEN h.FENCE <> n.FENCE THEN 'q' ELSE 'h' END "
                                + "|| n.FENCE || ':' || ?) FROM (" + keyHead + ") h, (SELECT MAX(FENCE) AS FENCE FROM "
                                + this.entries + " WHERE LOCK_ID = ?) n");
            }
        }
        this.deleteEntryByNumber = "DELETE FROM " + this.entries + " WHERE SESSION_ID = ? AND ENTRY_NUMBER = ?";
        this.deleteEntryByNumberAndNotify = dialect.hasNotifications()
                ? atReadCommitted(lockKeyRowFirst
                        + "WITH removed AS (DELETE FROM " + this.entries + " WHERE SESSION_ID = ? AND ENTRY_NUMBER = ? "
                        + "RETURNING LOCK_ID, FENCE) SELECT (SELECT COUNT(*) FROM removed), (SELECT pg_notify(?, "
                        + "MIN(e.FENCE)::TEXT) FROM " + this.entries + " e JOIN removed r ON e.LOCK_ID = r.LOCK_ID "
                        + "WHERE e.FENCE > r.FENCE AND NOT EXISTS (SELECT 1 FROM " + this.entries + " o WHERE "
                        + "o.LOCK_ID = r.LOCK_ID AND o.FENCE < r.FENCE) HAVING MIN(e.FENCE) IS NOT NULL)")
                : null;
        // The dot stays (the channel is always quoted): locks.X_ and LOCKS_X_ are two namespaces.
        this.channel = prefix.toLowerCase(Locale.ROOT) + "released";
    }

    /**
     * PostgreSQL only: the whole write of an entry as three statements sent at once, in one
     * transaction ({@link #atReadCommitted}) and one round trip: lock the key row, insert the entry
     * (answering its fence), read the oldest entry of the key, which is the head of the queue up to
     * the new entry: its fence is above the others of the key, and no other can be written before the
     * transaction ends. Each statement reads with a snapshot of its own, so the read sees every entry
     * committed before the key row's lock was granted. The fence is above the key's {@code LAST_FENCE}
     * too, and becomes it, in the statement that inserts the entry. Parameters: lock id, escaped key,
     * lock id, lock id, lock id, session id, entry number, value, then lock id; or, if
     * {@code tellingOlder}, channel and three times the lock id.
     * @param tellingOlder whether the write also notifies the channel with {@code q<fence>:<lock id>}
     * if the head is another entry: every older entry of the key now has one queued behind it. The
     * key, not the head: a waiter that takes the key by deleting the head's expired session does not
     * take the key row's lock, so the head read here may be gone by the commit. The head is read in a
     * subquery, so that the notification is sent for its one row only. If the new entry is the head,
     * it notifies {@code h<fence>:<lock id>} instead: every older entry of the key is gone (an entry
     * committed before this write holds the key row's lock would be the head, and one committed after
     * gets a greater fence), so a process that still counts on one (a kept entry deleted behind its
     * back) learns at once that it lost it.
     * @param aboveEveryEntry whether the fence goes above every entry, not only the key's: after a
     * write whose fence was another key's entry's
     * @return the statements, or {@code null} except on PostgreSQL
     */
    @Nullable String enqueueAtOnce(boolean tellingOlder, boolean aboveEveryEntry) {
        return this.enqueueAtOnceVariants[(tellingOlder ? 2 : 0) + (aboveEveryEntry ? 1 : 0)];
    }

    /** @return whether an entry is written in one round trip, {@link #enqueueAtOnce} (PostgreSQL) */
    boolean writesAtOnce() {
        return this.dialect == JdbcDialect.POSTGRESQL;
    }

    /**
     * PostgreSQL: {@code statements}, sent at once, as one transaction at READ COMMITTED whatever
     * the connection's default (the pool's, the role's or the database's, which may differ from one
     * connection to the next). Above it, a transaction reads with the snapshot of its first
     * statement, taken before the key row's lock was granted: a write would miss an entry committed
     * while it waited for that lock and hold beside it, a release would miss the entry it must wake.
     * The level is set in the round trip that sends the statements; {@code SET TRANSACTION} would do
     * the same but logs a warning on the server for every call, since statements sent at once run in
     * one transaction but not in a transaction block. A call that fails leaves its transaction open:
     * see {@link JdbcCalls#executeAtOnce}.
     */
    private static String atReadCommitted(String statements) {
        return "START TRANSACTION ISOLATION LEVEL READ COMMITTED; " + statements + "; COMMIT";
    }

    /**
     * @param expired {@code ""}, or a condition on the session row that must hold for it to be deleted
     * @return {@link #deleteSessionAndNotify} with that condition
     */
    private String deleteSessionAndNotify(String expired) {
        String session = "SESSION_ID = ?" + expired;
        return "SELECT LOCK_ID FROM " + this.keys + " WHERE LOCK_ID IN (SELECT e.LOCK_ID FROM " + this.entries + " e "
                + "WHERE e.SESSION_ID IN (SELECT SESSION_ID FROM " + this.sessions + " WHERE " + session + ")) "
                + "ORDER BY LOCK_ID FOR UPDATE; "
                + "WITH gone AS (DELETE FROM " + this.sessions + " WHERE " + session + " RETURNING SESSION_ID), "
                // The statement's snapshot still has the session's entries: the cascade deletes them at its end.
                + "firsts AS (SELECT LOCK_ID, MIN(FENCE) AS FENCE FROM " + this.entries + " WHERE SESSION_ID IN "
                + "(SELECT SESSION_ID FROM gone) GROUP BY LOCK_ID), "
                + "heads AS (SELECT MIN(e.FENCE) AS FENCE FROM " + this.entries + " e JOIN firsts f ON e.LOCK_ID = "
                + "f.LOCK_ID WHERE e.SESSION_ID NOT IN (SELECT SESSION_ID FROM gone) GROUP BY e.LOCK_ID, f.FENCE "
                + "HAVING MIN(e.FENCE) > f.FENCE), "
                + "notified AS (SELECT pg_notify(?, FENCE::TEXT) FROM heads) "
                + "SELECT (SELECT COUNT(*) FROM gone), (SELECT COUNT(*) FROM notified)";
    }

    /**
     * Why {@code prefix} cannot prefix the lock tables, or {@code null} if it can.
     * @param prefix a candidate: an SQL identifier start, optionally qualified by a schema
     * @return a sentence fragment naming the value, or {@code null}
     */
    static @Nullable String prefixProblem(@Nullable String prefix) {
        if (prefix == null || prefix.isEmpty()) {
            return "must not be empty";
        }
        if (!PREFIX.matcher(prefix).matches() || prefix.length() > 40) {
            return "must be letters, digits and underscores, optionally after a schema name and a dot "
                    + "(for example DISTRIBUTED_LOCK_ or locks.DISTRIBUTED_LOCK_), at most 40 characters, but was '"
                    + prefix + "'";
        }
        return null;
    }

    JdbcDialect dialect() {
        return this.dialect;
    }

    /**
     * The one form of a prefix: its table part in upper case (a schema part as given, since MySQL
     * tells schema names apart by case). PostgreSQL and H2 fold unquoted names, MySQL and MariaDB
     * on Linux do not: without this, {@code locks_} and {@code LOCKS_} would share tables on some
     * databases and not on others.
     * @param prefix a valid prefix
     * @return it, normalised
     */
    static String normalize(String prefix) {
        int dot = prefix.indexOf('.');
        return prefix.substring(0, dot + 1) + prefix.substring(dot + 1).toUpperCase(Locale.ROOT);
    }

    /** @return the key as stored in {@code LOCK_KEY} */
    static String escape(String key) {
        return ESCAPER.escape(key);
    }

    /** @return the length of {@link #escape escape(key)} in UTF-8 bytes */
    static long escapedSize(String key) {
        return ESCAPER.escapedSize(key);
    }

    /** @return the key a stored {@code LOCK_KEY} stands for */
    static String unescape(String escaped) {
        return ESCAPER.unescape(escaped);
    }

    /** @return the key's {@code LOCK_ID}: the SHA-256 of its escaped form, in lower-case hex */
    static String lockId(String key) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(escape(key).getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
        }
    }
}
