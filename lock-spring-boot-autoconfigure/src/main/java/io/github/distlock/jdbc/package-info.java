/**
 * The JDBC lock store: locks in the SQL database the application already has (PostgreSQL, MySQL,
 * MariaDB, H2), behind {@link io.github.distlock.jdbc.JdbcLockRegistry}.
 */
@NullMarked
package io.github.distlock.jdbc;

import org.jspecify.annotations.NullMarked;
