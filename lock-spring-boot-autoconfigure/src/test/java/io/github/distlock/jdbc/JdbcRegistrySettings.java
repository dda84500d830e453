package io.github.distlock.jdbc;

import java.time.Duration;

/** What a {@link JdbcLockRegistry} was built with, for tests of other packages (the auto-configuration's). */
public final class JdbcRegistrySettings {

    private JdbcRegistrySettings() {
    }

    /** @return the poll interval in force: the configured one, or the database's default once it is known */
    public static Duration pollInterval(JdbcLockRegistry registry) {
        return registry.pollInterval();
    }

    /** @return the bound on each database call */
    public static Duration requestTimeout(JdbcLockRegistry registry) {
        return registry.requestTimeout();
    }
}
