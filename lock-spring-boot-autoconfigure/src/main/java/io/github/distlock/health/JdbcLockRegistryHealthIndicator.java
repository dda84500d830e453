package io.github.distlock.health;

import java.time.Duration;

import io.github.distlock.jdbc.JdbcLockRegistry;

/**
 * Health of a {@link JdbcLockRegistry}, as {@link LockRegistryHealthIndicator} reports it: the
 * {@code namespace} is the table prefix, and {@code leaseTtl} the TTL of the session row. Details
 * never include the JDBC URL or credentials.
 */
public class JdbcLockRegistryHealthIndicator extends LockRegistryHealthIndicator {

    private final JdbcLockRegistry registry;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     */
    public JdbcLockRegistryHealthIndicator(JdbcLockRegistry registry) {
        super(registry, "database");
        this.registry = registry;
    }

    @Override
    protected Duration getLeaseTtl() {
        return this.registry.getLeaseTtl();
    }
}
