package io.github.distlock.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.boot.sql.init.dependency.DatabaseInitializerDetector;
import org.springframework.core.Ordered;

/**
 * Tells Spring Boot that {@link JdbcLockSchemaInitializer} initializes the database, so that beans
 * that depend on database initialization ({@code @DependsOnDatabaseInitialization}, Spring's JDBC
 * templates) are created after it. Ordered last, so it runs after the initializers of the other
 * detectors: migrations (Flyway, Liquibase) and {@code spring.sql.init} scripts come first.
 */
class JdbcLockSchemaInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

    @Override
    protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
        return Set.of(JdbcLockSchemaInitializer.class);
    }

    /** @see DatabaseInitializerDetector#getOrder() */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
