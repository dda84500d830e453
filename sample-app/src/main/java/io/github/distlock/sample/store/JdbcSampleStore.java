package io.github.distlock.sample.store;

import java.sql.Types;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.github.distlock.sample.SampleProperties;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The sample's shared data in the application's database ({@code distributed-lock.store=jdbc}),
 * through the {@link DataSource} (Spring Boot's {@code spring.datasource} pool) that the locks use
 * too: one row per path in the table {@value #TABLE}, created at the first call where it is missing.
 * A path is the row's {@code PATH}, {@code <sample.store.prefix><path>} as an etcd or Redis key would
 * be; its text is {@code VAL}. A fenced value keeps its fence in the same row ({@code FENCE}, null for
 * values that are not fenced), and a fenced write is one conditional {@code UPDATE} of value and fence
 * {@code WHERE PATH = ? AND FENCE < ?}: the database checks the stored fence and writes in one
 * statement, so of two writers the one with the smaller fence cannot overwrite the other, whatever
 * order they arrive in.
 *
 * <p>Written for PostgreSQL, MySQL/MariaDB and H2 (on MySQL and MariaDB the table compares paths
 * byte by byte, {@code utf8mb4_bin}, so that paths differing only in case are distinct). Each call
 * runs on a small pool of this store's threads and is bounded by {@code sample.store.timeout}, also
 * while the pool waits for a connection or the database does not answer at all; its statements carry
 * that bound as their query timeout too (in whole seconds, rounded up), so that the database stops
 * working on a call the sample has given up on.
 */
@Component
@ConditionalOnProperty(name = "distributed-lock.store", havingValue = "jdbc")
public class JdbcSampleStore implements SampleStore, DisposableBean {

    /** The table of the sample's data (unquoted, so {@code sample_data} on PostgreSQL). */
    public static final String TABLE = "SAMPLE_DATA";

    /** Calls of this store at once; more wait for a thread (within their bound). */
    private static final int THREADS = 4;

    private static final String CREATE_TABLE = "CREATE TABLE IF NOT EXISTS " + TABLE
            + " (PATH VARCHAR(512) NOT NULL PRIMARY KEY, VAL VARCHAR(4000) NOT NULL, FENCE BIGINT)";

    private static final String SELECT_VALUE = "SELECT VAL FROM " + TABLE + " WHERE PATH = ?";

    private static final String SELECT_FENCE = "SELECT FENCE FROM " + TABLE + " WHERE PATH = ?";

    /** A LIKE pattern with {@code !} as its escape character: neither SQL nor MySQL's strings treat it specially. */
    private static final String SELECT_PREFIXED = "SELECT PATH, VAL FROM " + TABLE + " WHERE PATH LIKE ? ESCAPE '!'";

    private static final String INSERT = "INSERT INTO " + TABLE + " (PATH, VAL, FENCE) VALUES (?, ?, ?)";

    private static final String UPDATE_VALUE = "UPDATE " + TABLE + " SET VAL = ? WHERE PATH = ?";

    private static final String UPDATE_FENCED = "UPDATE " + TABLE + " SET VAL = ?, FENCE = ? WHERE PATH = ? AND FENCE < ?";

    private final JdbcTemplate jdbc;

    private final String prefix;

    private final Duration timeout;

    private final ThreadPoolExecutor executor;

    /** Whether the table was created or found; cleared when a statement finds it gone. */
    private volatile boolean tableReady;

    public JdbcSampleStore(DataSource dataSource, SampleProperties properties) {
        this.prefix = properties.store().prefix();
        this.timeout = properties.store().timeout();
        this.jdbc = new JdbcTemplate(dataSource);
        this.jdbc.setQueryTimeout(queryTimeoutSeconds(this.timeout));
        AtomicInteger threads = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                (task) -> {
                    Thread thread = new Thread(task, "sample-store-" + threads.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        this.executor.allowCoreThreadTimeOut(true);
    }

    /** JDBC counts query timeouts in whole seconds, where 0 means none: at least 1. */
    static int queryTimeoutSeconds(Duration timeout) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (timeout.toMillis() + 999) / 1000));
    }

    @Override
    public Optional<String> get(String path) {
        return call("read " + path, () -> this.jdbc.queryForList(SELECT_VALUE, String.class, key(path))
            .stream()
            .findFirst());
    }

    @Override
    public Map<String, String> list(String pathPrefix) {
        String keyPrefix = key(pathPrefix);
        return call("list " + pathPrefix, () -> {
            Map<String, String> values = new TreeMap<>();
            this.jdbc.query(SELECT_PREFIXED, (row) -> {
                String key = row.getString(1);
                // LIKE may ignore case (MySQL's default collations): only what starts with the exact prefix.
                if (key.startsWith(keyPrefix)) {
                    values.put(key.substring(keyPrefix.length()), row.getString(2));
                }
            }, like(keyPrefix) + "%");
            return values;
        });
    }

    @Override
    public void put(String path, String value) {
        call("write " + path, () -> {
            // An update, else an insert; an insert that loses to another one updates after all.
            while (this.jdbc.update(UPDATE_VALUE, value, key(path)) == 0) {
                if (insert(path, value, null)) {
                    break;
                }
            }
            return null;
        });
    }

    @Override
    public boolean create(String path, String value) {
        return call("create " + path, () -> insert(path, value, null));
    }

    @Override
    public boolean createFenced(String path, String value) {
        return call("create " + path, () -> insert(path, value, 0L));
    }

    @Override
    public FencedWrite putFenced(String path, String value, long fence) {
        return call("write " + path, () -> {
            while (true) {
                // One statement: the database compares the stored fence and writes, atomically.
                if (this.jdbc.update(UPDATE_FENCED, value, fence, key(path), fence) == 1) {
                    return FencedWrite.WRITTEN;
                }
                List<@Nullable Long> stored = this.jdbc.queryForList(SELECT_FENCE, Long.class, key(path));
                Long storedFence = stored.isEmpty() ? null : stored.get(0);
                if (storedFence == null) {
                    // No row, or a value written without a fence.
                    return FencedWrite.MISSING;
                }
                if (storedFence >= fence) {
                    return FencedWrite.stale(storedFence);
                }
                // Created with fence 0 after the update found no row: try again.
            }
        });
    }

    /** @return whether the row was inserted; {@code false} if one with that path exists */
    private boolean insert(String path, String value, @Nullable Long fence) {
        try {
            // Typed, so that a null fence needs no look-up of the parameter's type.
            this.jdbc.update(INSERT, new Object[] { key(path), value, fence },
                    new int[] { Types.VARCHAR, Types.VARCHAR, Types.BIGINT });
            return true;
        }
        catch (DuplicateKeyException ex) {
            return false;
        }
    }

    private String key(String path) {
        return this.prefix + path;
    }

    /** {@code text} matched literally by a LIKE pattern with the escape character {@code !}. */
    static String like(String text) {
        return text.replace("!", "!!").replace("%", "!%").replace("_", "!_");
    }

    /**
     * Creates the table unless it was created or found before. {@code IF NOT EXISTS} is not enough
     * when several instances start at once (PostgreSQL may then fail all but one with a unique
     * violation in its catalog), so a failed creation counts when the table is there after all.
     */
    private void ensureTable() {
        if (this.tableReady) {
            return;
        }
        try {
            this.jdbc.execute(createTableStatement());
        }
        catch (DataAccessException ex) {
            if (!tableExists()) {
                throw ex;
            }
        }
        this.tableReady = true;
    }

    private String createTableStatement() {
        String product = this.jdbc.execute((ConnectionCallback<String>) (connection) -> connection.getMetaData()
            .getDatabaseProductName());
        String name = (product != null) ? product.toLowerCase(Locale.ROOT) : "";
        if (name.contains("mysql") || name.contains("mariadb")) {
            return CREATE_TABLE + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
        }
        return CREATE_TABLE;
    }

    private boolean tableExists() {
        try {
            this.jdbc.queryForList("SELECT PATH FROM " + TABLE + " WHERE 1 = 0");
            return true;
        }
        catch (DataAccessException ex) {
            return false;
        }
    }

    /**
     * Runs {@code work} (after making sure the table exists) on this store's threads and waits for
     * it at most {@code sample.store.timeout}.
     */
    private <T> T call(String what, Supplier<T> work) {
        Future<T> answer;
        try {
            answer = this.executor.submit(() -> {
                ensureTable();
                try {
                    return work.get();
                }
                catch (BadSqlGrammarException ex) {
                    // The table may have been dropped: the next call creates it again.
                    this.tableReady = false;
                    throw ex;
                }
            });
        }
        catch (RuntimeException ex) {
            throw new StoreUnavailableException("the database request could not start (" + what + "): "
                    + ex.getMessage(), ex);
        }
        try {
            return answer.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            answer.cancel(true);
            throw new StoreUnavailableException("the database did not answer within " + this.timeout.toMillis()
                    + " ms (" + what + ")", ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof DataAccessException failure) {
                throw new StoreUnavailableException("database request failed (" + what + "): "
                        + failure.getMostSpecificCause().getMessage(), failure);
            }
            if (ex.getCause() instanceof RuntimeException bug) {
                throw bug;
            }
            throw new StoreUnavailableException("database request failed (" + what + "): " + ex.getMessage(), ex);
        }
        catch (InterruptedException ex) {
            answer.cancel(true);
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for the database (" + what + ")", ex);
        }
    }

    @Override
    public void destroy() {
        this.executor.shutdownNow();
    }
}
