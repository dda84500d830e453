package io.github.distlock.testsupport;

import java.util.function.Supplier;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a {@link DatabaseServer} once per test class and stops it after the class. Register it
 * on a {@code static} field, since it uses class-level callbacks:
 * <pre>{@code
 * @RegisterExtension
 * static final DatabaseServerExtension postgres = DatabaseServerExtension.postgres();
 * }</pre>
 */
public final class DatabaseServerExtension implements BeforeAllCallback, AfterAllCallback {

    private final Supplier<DatabaseServer> starter;

    private DatabaseServer server;

    /** The class whose {@code beforeAll} started the server: only its {@code afterAll} stops it. */
    private String ownerId;

    private DatabaseServerExtension(Supplier<DatabaseServer> starter) {
        this.starter = starter;
    }

    /** @return an extension that runs a private PostgreSQL server */
    public static DatabaseServerExtension postgres() {
        return new DatabaseServerExtension(PostgresServer::start);
    }

    /** @return an extension that runs a private MariaDB server */
    public static DatabaseServerExtension mariaDb() {
        return new DatabaseServerExtension(MariaDbServer::start);
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (this.server == null) {
            this.server = this.starter.get();
            this.ownerId = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (this.server != null && context.getUniqueId().equals(this.ownerId)) {
            try {
                this.server.close();
            }
            finally {
                this.server = null;
                this.ownerId = null;
            }
        }
    }

    /** @return the running server */
    public synchronized DatabaseServer server() {
        if (this.server == null) {
            throw new IllegalStateException("The database server runs only while its test class does");
        }
        return this.server;
    }

    /** @return a new view of the JDBC store on the server (see {@link TestStore#jdbc}) */
    public TestStore openStore() {
        return TestStore.open(TestStore.jdbc(server()));
    }
}
