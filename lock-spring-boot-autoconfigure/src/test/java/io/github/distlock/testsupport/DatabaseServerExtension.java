package io.github.distlock.testsupport;

import java.util.function.Supplier;

/**
 * Starts a {@link DatabaseServer} once per test class and stops it after the class (see
 * {@link ClassScopedServerExtension}):
 * <pre>{@code
 * @RegisterExtension
 * static final DatabaseServerExtension postgres = DatabaseServerExtension.postgres();
 * }</pre>
 */
public final class DatabaseServerExtension extends ClassScopedServerExtension<DatabaseServer> {

    private DatabaseServerExtension(Supplier<DatabaseServer> starter) {
        super(starter, "The database server runs only while its test class does");
    }

    /** @return an extension that runs a private PostgreSQL server */
    public static DatabaseServerExtension postgres() {
        return new DatabaseServerExtension(PostgresServer::start);
    }

    /** @return an extension that runs a private MariaDB server */
    public static DatabaseServerExtension mariaDb() {
        return new DatabaseServerExtension(MariaDbServer::start);
    }

    /** @return the running server */
    public DatabaseServer server() {
        return running();
    }

    /** @return a new view of the JDBC store on the server (see {@link TestStore#jdbc}) */
    public TestStore openStore() {
        return TestStore.open(TestStore.jdbc(server()));
    }
}
