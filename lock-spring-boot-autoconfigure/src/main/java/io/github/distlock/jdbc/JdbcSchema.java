package io.github.distlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the lock tables from the schema script of the database's dialect, with the registry's
 * table prefix. The scripts only create what is missing, so running them again (or from several
 * instances at once) changes nothing; a run whose statement lost a race with another instance
 * creating the same tables is repeated (a run that got no connection is not).
 * <p>
 * Tables of earlier versions are brought up to date: a {@code <prefix>LOCK_KEY} table without the
 * {@code LAST_FENCE} column (the key's last fence, which keeps an idle key's next fence above its
 * last when the database's clock steps back) gets it, with {@link #addLastFenceColumn}. Where the
 * application creates the tables itself (a migration tool), a registry on a table without it fails
 * every acquisition with a message that names the table, the column and that statement.
 */
public final class JdbcSchema {

    private static final Logger logger = LoggerFactory.getLogger(JdbcSchema.class);

    private static final int ATTEMPTS = 3;

    private JdbcSchema() {
    }

    /**
     * Creates the lock tables that are missing.
     * @param dataSource where
     * @param tablePrefix the prefix of the tables (see {@link JdbcLockRegistry.Builder#tablePrefix})
     * @throws IllegalStateException if the tables could not be created; the message names the
     * statement and the database's error
     */
    public static void initialize(DataSource dataSource, String tablePrefix) {
        Objects.requireNonNull(dataSource, "DataSource must not be null");
        String problem = JdbcTables.prefixProblem(tablePrefix);
        if (problem != null) {
            throw new IllegalArgumentException("JDBC table prefix " + problem);
        }
        for (int attempt = 1;; attempt++) {
            String current = null;
            try (Connection connection = dataSource.getConnection()) {
                JdbcDialect dialect = JdbcDialect.of(connection);
                boolean autoCommit = connection.getAutoCommit();
                connection.setAutoCommit(true);
                try (Statement statement = connection.createStatement()) {
                    for (String sql : statements(dialect, tablePrefix)) {
                        current = sql;
                        statement.execute(sql);
                        logWarnings(statement);
                    }
                    current = lastFenceProbe(tablePrefix);
                    if (!hasColumn(statement, current)) {
                        // An earlier version's table. Two instances may add it at once: the loser's
                        // "duplicate column" repeats the run, which then finds it.
                        current = addLastFenceColumn(tablePrefix);
                        statement.execute(current);
                        logger.info("Added the column LAST_FENCE to the lock table {}LOCK_KEY",
                                JdbcTables.normalize(tablePrefix));
                    }
                }
                finally {
                    connection.setAutoCommit(autoCommit);
                }
                logger.debug("Lock tables {}* are in place", tablePrefix);
                return;
            }
            catch (SQLException ex) {
                // Only a statement can have lost a race; a connection the pool did not give within its own
                // timeout would only make start-up wait that long again.
                if (current != null && attempt < ATTEMPTS) {
                    // Another instance may have been creating the same objects (PostgreSQL's catalog races).
                    logger.debug("Creating the lock tables failed ({}); trying again", ex.getMessage());
                    continue;
                }
                throw new IllegalStateException("Could not create the lock tables " + tablePrefix + "*"
                        + ((current != null) ? " (statement: " + current + ")" : "") + ": " + ex.getMessage(), ex);
            }
        }
    }

    /**
     * The statement that adds the key table's {@code LAST_FENCE} column to a table of an earlier
     * version, on every database the store supports. Existing rows start at 0: keys that have
     * entries get their last fence with their next one, and an idle key's row goes at the next sweep,
     * as it did before.
     * @param tablePrefix the prefix of the tables
     * @return the statement
     */
    public static String addLastFenceColumn(String tablePrefix) {
        return "ALTER TABLE " + JdbcTables.normalize(tablePrefix) + "LOCK_KEY ADD COLUMN LAST_FENCE BIGINT NOT NULL "
                + "DEFAULT 0";
    }

    /** @return a query that fails with {@link #isMissingColumn} on a key table without {@code LAST_FENCE} */
    private static String lastFenceProbe(String tablePrefix) {
        return "SELECT LAST_FENCE FROM " + JdbcTables.normalize(tablePrefix) + "LOCK_KEY WHERE 1 = 0";
    }

    /**
     * @param probe a query that names the column
     * @return whether it ran; {@code false} if the database said the column is missing
     * @throws SQLException on any other failure
     */
    private static boolean hasColumn(Statement statement, String probe) throws SQLException {
        try {
            statement.executeQuery(probe).close();
            return true;
        }
        catch (SQLException ex) {
            if (isMissingColumn(ex)) {
                return false;
            }
            throw ex;
        }
    }

    /** @return whether the database said a column a statement names does not exist */
    static boolean isMissingColumn(SQLException ex) {
        String state = ex.getSQLState();
        // 42703 PostgreSQL; 42S22 MySQL, MariaDB and H2.
        return state != null && (state.equals("42703") || state.equals("42S22"));
    }

    /**
     * Logs what a statement of the script warns about (a step it left for a later run); notices
     * such as "already exists, skipping" stay quiet.
     */
    private static void logWarnings(Statement statement) throws SQLException {
        for (SQLWarning warning = statement.getWarnings(); warning != null; warning = warning.getNextWarning()) {
            // SQLSTATE class 01 is a warning; PostgreSQL's notices come with their own classes.
            if (warning.getSQLState() != null && warning.getSQLState().startsWith("01")) {
                logger.warn("Lock tables: {}", warning.getMessage());
            }
        }
        statement.clearWarnings();
    }

    /**
     * @param dialect the database's dialect
     * @param tablePrefix the prefix
     * @return the schema script's statements with the prefix applied; a block between {@code $$}
     * lines is one statement
     */
    static List<String> statements(JdbcDialect dialect, String tablePrefix) {
        String script;
        try (InputStream in = JdbcSchema.class.getClassLoader().getResourceAsStream(dialect.schemaScript())) {
            if (in == null) {
                throw new IllegalStateException("Schema script " + dialect.schemaScript() + " is missing");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            throw new IllegalStateException("Could not read " + dialect.schemaScript(), ex);
        }
        // Index and constraint names cannot carry a schema: they take the prefix without it.
        tablePrefix = JdbcTables.normalize(tablePrefix);
        String unqualified = tablePrefix.substring(tablePrefix.indexOf('.') + 1);
        script = script.replaceAll(JdbcTables.DEFAULT_PREFIX + "(ENTRY_QUEUE|ENTRY_NUMBER)\\b", unqualified + "$1")
            .replaceAll(JdbcTables.DEFAULT_PREFIX + "(SESSION|LOCK_KEY|ENTRY)\\b", tablePrefix + "$1");
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean inBlock = false;
        for (String line : script.split("\n")) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.split("\\$\\$", -1).length % 2 == 0) {
                inBlock = !inBlock;
            }
            if (!inBlock && line.strip().endsWith(";")) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1));
                current.setLength(0);
            }
        }
        return statements;
    }
}
