package io.github.distlock.testsupport;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

/**
 * A {@link FencedResource} in a database: a row of {@code FENCED_RESOURCE}, written by an update
 * that compares the stored fence, or inserted once (a concurrent first write loses on the key).
 */
public final class JdbcFencedResource implements FencedResource {

    private final DataSource dataSource;

    private final String name;

    public JdbcFencedResource(DataSource dataSource, String name) {
        this.dataSource = dataSource;
        this.name = name;
        for (int attempt = 1;; attempt++) {
            try (Connection connection = dataSource.getConnection();
                    Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE IF NOT EXISTS FENCED_RESOURCE (NAME VARCHAR(200) NOT NULL PRIMARY KEY, "
                        + "FENCE BIGINT NOT NULL, DATA VARCHAR(1000) NOT NULL)");
                return;
            }
            catch (SQLException ex) {
                // On PostgreSQL, processes that create the table at once may lose a race in the catalog
                // (duplicate pg_type row) although the statement says IF NOT EXISTS: once more finds it.
                if (attempt == 3) {
                    throw new IllegalStateException("Could not create FENCED_RESOURCE", ex);
                }
            }
        }
    }

    @Override
    public boolean write(long fence, String data) {
        if (fence <= 0) {
            throw new IllegalArgumentException("fence must be positive, but was " + fence);
        }
        try (Connection connection = this.dataSource.getConnection()) {
            try (PreparedStatement update = connection.prepareStatement(
                    "UPDATE FENCED_RESOURCE SET FENCE = ?, DATA = ? WHERE NAME = ? AND FENCE < ?")) {
                update.setLong(1, fence);
                update.setString(2, data);
                update.setString(3, this.name);
                update.setLong(4, fence);
                if (update.executeUpdate() == 1) {
                    return true;
                }
            }
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT INTO FENCED_RESOURCE (NAME, FENCE, DATA) VALUES (?, ?, ?)")) {
                insert.setString(1, this.name);
                insert.setLong(2, fence);
                insert.setString(3, data);
                return insert.executeUpdate() == 1;
            }
            catch (SQLException ex) {
                if (ex.getSQLState() != null && ex.getSQLState().startsWith("23")) {
                    // The row exists with a fence at least as high.
                    return false;
                }
                throw ex;
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Could not write " + this.name, ex);
        }
    }

    @Override
    public long storedFence() {
        return (long) read("FENCE", 0L);
    }

    @Override
    public String data() {
        return (String) read("DATA", null);
    }

    private Object read(String column, Object missing) {
        try (Connection connection = this.dataSource.getConnection();
                PreparedStatement select = connection.prepareStatement(
                        "SELECT " + column + " FROM FENCED_RESOURCE WHERE NAME = ?")) {
            select.setString(1, this.name);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? row.getObject(1) : missing;
            }
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Could not read " + this.name, ex);
        }
    }
}
