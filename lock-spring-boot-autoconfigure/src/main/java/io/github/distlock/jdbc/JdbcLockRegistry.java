package io.github.distlock.jdbc;

import java.time.Duration;
import java.util.Objects;

import javax.sql.DataSource;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.LockCore;
import io.github.distlock.store.RegistrySettings;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockRegistry} whose locks are shared by every process that uses the same database
 * (PostgreSQL 10+, MySQL 8.0+, MariaDB 10.3+ or H2 2.x) and table prefix: the lock core
 * ({@link LockCore}: holds, reentrancy, the unfair gate, waiting, loss reporting) over the JDBC
 * store, which decides who holds.
 *
 * <p><b>How it works.</b> Three tables ({@code <prefix>SESSION}, {@code <prefix>LOCK_KEY},
 * {@code <prefix>ENTRY}; scripts in the jar under {@code io/github/distlock/jdbc/}, see
 * {@link JdbcSchema}). An acquisition inserts an entry row in a short transaction that holds its
 * key's row lock, so entries of a key commit in fence order; the oldest entry of a key holds it. A release deletes the row, comparing fence and session. Waiters
 * read the head of their queue again when told (on PostgreSQL by {@code LISTEN/NOTIFY}, naming the
 * next entry; a release in this process wakes its own waiters), when the head's session would
 * expire, and at least every poll interval (with jitter). An uncontended {@code lock()} plus
 * {@code unlock()} is two transactions, two commits.
 *
 * <p><b>Session.</b> One session per registry: a row whose expiry the database computes with its
 * own clock (application clocks may differ), pushed one TTL ahead every third of the TTL while it
 * has not passed. Once it passed, the session is dead for good: a waiter behind one of its entries,
 * or any registry's periodic sweep, deletes it and its entries. If the database acknowledges no
 * renewal within one TTL (measured on this process's monotonic clock from when the acknowledged
 * renewal was sent), or says the row is gone, the holds are lost:
 * {@link FencedLock#isLockedByCurrentThread()} turns false and {@link FencedLock#unlock()} throws
 * {@link LockLostException}. A transient database error is retried at once and costs no hold that
 * is still within its TTL.
 *
 * <p><b>Connections.</b> Every call borrows a connection of the {@link DataSource} for one short
 * transaction and gives it back; a held or awaited lock pins none. On PostgreSQL the registry keeps
 * one connection for {@code LISTEN} once it has waited. The registry's statements never join the
 * application's transactions (pass the pool itself, not a transaction-aware proxy). Every call is
 * bounded by the request timeout, whatever the pool's connection timeout: calls run on the
 * registry's threads, statements carry a query timeout.
 *
 * <p><b>Fences</b> are the database's clock in microseconds when the entry is written, raised above
 * the key's newest entry and above the last fence issued for the key, which its {@code LOCK_KEY}
 * row keeps ({@code LAST_FENCE}, set in the same transaction) for 24 hours after that fence by the
 * database's clock. So they strictly increase per key, also across restarts, failovers and restores
 * (no sequence to rewind) and across a step back of the database's clock, on a key without entries
 * too. The one way back: a key unused for more than 24 hours by the database's clock (its row
 * deleted), then a step back of that clock below its last fence; or the row lost in a restore or
 * failover to a server whose clock is behind the lost fences.
 *
 * <p><b>Limits.</b> The database is the single point of truth: its failover must not lose committed
 * transactions (synchronous replication) for holds to survive it; an asynchronous replica promoted
 * after losing commits can let two processes hold a key, and the fence then protects fenced
 * resources. A step back of the database's clock lengthens the sessions renewed before it by its
 * size (a crashed holder blocks its keys that much longer); a step forward can expire live sessions
 * before their next renewal, which then reports their holds lost, as when the database loses an
 * entry (another process may hold the key meanwhile; the fence protects fenced resources).
 */
public final class JdbcLockRegistry extends CoreLockRegistry<JdbcLockStore> implements AutoCloseable {

    /** Default prefix of the lock tables. */
    public static final String DEFAULT_TABLE_PREFIX = JdbcTables.DEFAULT_PREFIX;

    /** Default lease TTL of the session. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

    /** Default bound on each database call. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    /** The shortest lease TTL: renewals every third of it must fit in a round trip with room to spare. */
    public static final Duration MIN_LEASE_TTL = Duration.ofSeconds(1);

    private final Duration leaseTtl;

    private JdbcLockRegistry(Builder builder) {
        super(builder.ownerIdentity, builder.localHandoff, (statistics, losses) -> new JdbcLockStore(builder.dataSource,
                builder.tablePrefix, null, builder.leaseTtl, builder.requestTimeout, builder.pollInterval,
                builder.localHandoff.lingers(), builder.ownerIdentity, builder.description, statistics, losses));
        this.leaseTtl = builder.leaseTtl;
    }

    /**
     * Starts building a registry on {@code dataSource}.
     * @param dataSource the application's connection pool (not closed by the registry)
     * @return a builder with the defaults
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * Why {@code tablePrefix} cannot prefix the lock tables, or {@code null} if it can: the one check
     * behind {@link Builder#tablePrefix(String)} and the {@code distributed-lock.jdbc.table-prefix} property.
     * @param tablePrefix a candidate prefix
     * @return a sentence fragment naming the value, or {@code null}
     */
    public static @Nullable String tablePrefixProblem(@Nullable String tablePrefix) {
        return JdbcTables.prefixProblem(tablePrefix);
    }

    /**
     * Why {@code leaseTtl} cannot be a lease TTL, or {@code null} if it can.
     * @param leaseTtl a candidate TTL
     * @return a sentence fragment without the value, or {@code null}
     */
    public static @Nullable String leaseTtlProblem(@Nullable Duration leaseTtl) {
        if (leaseTtl == null || leaseTtl.compareTo(MIN_LEASE_TTL) < 0) {
            return "must be at least " + MIN_LEASE_TTL.toMillis() + "ms";
        }
        if (leaseTtl.toNanos() % 1_000_000 != 0) {
            return "must be a whole number of milliseconds";
        }
        return null;
    }

    /**
     * Why {@code pollInterval} cannot be a poll interval, or {@code null} if it can.
     * @param pollInterval a candidate interval
     * @return a sentence fragment without the value, or {@code null}
     */
    public static @Nullable String pollIntervalProblem(@Nullable Duration pollInterval) {
        if (pollInterval == null || pollInterval.toMillis() < 1 || pollInterval.compareTo(Duration.ofMinutes(1)) > 0) {
            return "must be between 1ms and 1m";
        }
        return null;
    }

    /** @return the store behind this registry (its session, for tests in this package) */
    JdbcLockStore jdbc() {
        return store();
    }

    /** @return whether this registry's LISTEN is in effect (PostgreSQL), so that notifications reach it */
    boolean isListening() {
        return jdbc().isListening();
    }

    /** @return the lease TTL of the session */
    public Duration getLeaseTtl() {
        return this.leaseTtl;
    }

    /**
     * Releases this registry's entries and deletes its session, which frees its locks; holds still
     * open report themselves lost and waiters fail. Idempotent.
     */
    @Override
    public void close() {
        jdbc().close();
    }

    // ---- for tests -----------------------------------------------------------------------------

    /** Threads of this registry waiting for {@code key}: at the unfair gate, or behind an older entry. */
    int queuedWaiters(String key) {
        return core().waitingThreadCount(key);
    }

    /** Removals of entries that the database has not confirmed yet. */
    int pendingRemovals() {
        return jdbc().pendingRemovals();
    }

    /** The poll interval in force: the configured one, or the database's default once the database is known. */
    Duration pollInterval() {
        return Duration.ofNanos(jdbc().pollIntervalNanos());
    }

    /** The bound on each database call. */
    Duration requestTimeout() {
        return Duration.ofNanos(jdbc().requestTimeoutNanos());
    }

    /** The id of the current session, or {@code null} before the first. */
    @Nullable String sessionId() {
        JdbcSession session = jdbc().session();
        return (session != null) ? session.id : null;
    }

    /** Builds a {@link JdbcLockRegistry}. */
    public static final class Builder {

        private final DataSource dataSource;

        private String tablePrefix = DEFAULT_TABLE_PREFIX;

        private Duration leaseTtl = DEFAULT_LEASE_TTL;

        private @Nullable Duration pollInterval;

        private String ownerIdentity = RegistrySettings.processIdentity();

        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private String description = "the database";

        private LocalHandoff localHandoff = LocalHandoff.DEFAULT;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "DataSource must not be null");
        }

        /**
         * Sets the prefix of the lock tables (default {@value #DEFAULT_TABLE_PREFIX}). Registries
         * with different prefixes never share or see each other's locks. The table part is taken
         * in upper case on every database ({@code locks_} and {@code LOCKS_} are one prefix), since
         * PostgreSQL and H2 fold unquoted names and MySQL does not.
         * @param tablePrefix letters, digits and underscores, optionally after a schema name and a dot
         * @return this builder
         */
        public Builder tablePrefix(String tablePrefix) {
            String problem = tablePrefixProblem(tablePrefix);
            if (problem != null) {
                throw new IllegalArgumentException("JDBC table prefix " + problem);
            }
            this.tablePrefix = tablePrefix;
            return this;
        }

        /**
         * Sets the lease TTL (default 10 s): how long a crashed holder can block others, and how
         * long the database may be unreachable before holds are considered lost.
         * @param leaseTtl whole milliseconds, at least {@link #MIN_LEASE_TTL}
         * @return this builder
         */
        public Builder leaseTtl(Duration leaseTtl) {
            String problem = leaseTtlProblem(leaseTtl);
            if (problem != null) {
                throw new IllegalArgumentException("JDBC lease TTL " + problem + ", but was " + leaseTtl);
            }
            this.leaseTtl = leaseTtl;
            return this;
        }

        /**
         * Sets how often a waiter reads its queue again at least (default: 1 s on PostgreSQL,
         * where notifications wake waiters, 50 ms elsewhere); each wait varies by up to a quarter
         * either way, so that waiters of many processes do not read in step.
         * @param pollInterval between 1 ms and 1 min
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            String problem = pollIntervalProblem(pollInterval);
            if (problem != null) {
                throw new IllegalArgumentException("JDBC poll interval " + problem + ", but was " + pollInterval);
            }
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * Sets the identity stored with every entry, shown in errors and tools as the holder
         * (default {@code <host>:<pid>}); the thread name is appended per entry.
         * @param ownerIdentity a non-empty identity without line breaks
         * @return this builder
         */
        public Builder ownerIdentity(String ownerIdentity) {
            this.ownerIdentity = RegistrySettings.checkOwnerIdentity(ownerIdentity);
            return this;
        }

        /**
         * Sets the bound on each database call (default 5 s), including the wait for a pool connection.
         * @param requestTimeout a positive duration
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = RegistrySettings.checkRequestTimeout(requestTimeout);
            return this;
        }

        /**
         * Names the database, for messages only (never with a password).
         * @param description for example {@code PostgreSQL at db:5432/orders}
         * @return this builder
         */
        public Builder description(String description) {
            this.description = Objects.requireNonNull(description, "description must not be null");
            return this;
        }

        /**
         * Sets how unfair locks are shared among this process's threads without store round trips
         * (default {@link LocalHandoff#DEFAULT}): see {@link LocalHandoff}.
         * @param localHandoff the pass window and the linger
         * @return this builder
         */
        public Builder localHandoff(LocalHandoff localHandoff) {
            this.localHandoff = Objects.requireNonNull(localHandoff, "localHandoff must not be null");
            return this;
        }

        /** @return a new registry */
        public JdbcLockRegistry build() {
            return new JdbcLockRegistry(this);
        }
    }
}
