package io.github.distlock.autoconfigure;

import javax.sql.DataSource;

import io.github.distlock.autoconfigure.DistributedLockProperties.Jdbc.InitializeSchema;
import io.github.distlock.jdbc.JdbcSchema;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;

/**
 * Creates the lock tables when the application starts, as {@code distributed-lock.jdbc.initialize-schema}
 * says: {@code always}, {@code embedded} (only for an embedded database, as Spring Boot's
 * {@link EmbeddedDatabaseConnection} tells them: H2 or HSQLDB in memory, Derby) or {@code never}.
 * A database initializer in Spring Boot's sense ({@link JdbcLockSchemaInitializerDetector}): it runs
 * after Flyway, Liquibase and {@code spring.sql.init} scripts, and beans that depend on database
 * initialization, the lock registry among them, are created after it.
 */
class JdbcLockSchemaInitializer implements InitializingBean {

    private static final Log logger = LogFactory.getLog(JdbcLockSchemaInitializer.class);

    private final DataSource dataSource;

    private final String tablePrefix;

    private final InitializeSchema mode;

    private volatile boolean initialized;

    JdbcLockSchemaInitializer(DataSource dataSource, String tablePrefix, InitializeSchema mode) {
        this.dataSource = dataSource;
        this.tablePrefix = tablePrefix;
        this.mode = mode;
    }

    @Override
    public void afterPropertiesSet() {
        boolean create = switch (this.mode) {
            case ALWAYS -> true;
            case EMBEDDED -> isEmbedded(this.dataSource);
            case NEVER -> false;
        };
        if (!create) {
            logger.debug("Not creating the lock tables " + this.tablePrefix + "* (distributed-lock.jdbc.initialize-schema="
                    + name(this.mode) + ")");
            return;
        }
        try {
            JdbcSchema.initialize(this.dataSource, this.tablePrefix);
        }
        catch (RuntimeException ex) {
            throw new IllegalStateException("distributed-lock.jdbc.initialize-schema=" + name(this.mode) + ": "
                    + ex.getMessage(), ex);
        }
        this.initialized = true;
        logger.debug("Lock tables " + this.tablePrefix + "* are in place (distributed-lock.jdbc.initialize-schema="
                + name(this.mode) + ")");
    }

    /** @return whether the tables were created (or found in place) at start-up */
    boolean isInitialized() {
        return this.initialized;
    }

    /**
     * Whether the DataSource is an embedded database. Decided from its JDBC URL when the pool tells
     * it (no connection needed, so an unreachable database does not hold start-up for the pool's
     * connection timeout), else from a connection's metadata.
     */
    static boolean isEmbedded(DataSource dataSource) {
        @Nullable String url = JdbcDataSourceDescription.jdbcUrl(dataSource);
        if (url != null) {
            return EmbeddedDatabaseConnection.isEmbedded(DatabaseDriver.fromJdbcUrl(url).getDriverClassName(), url);
        }
        return EmbeddedDatabaseConnection.isEmbedded(dataSource);
    }

    private static String name(InitializeSchema mode) {
        return mode.name().toLowerCase(java.util.Locale.ROOT);
    }
}
