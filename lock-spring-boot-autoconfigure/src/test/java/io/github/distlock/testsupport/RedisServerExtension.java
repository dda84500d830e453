package io.github.distlock.testsupport;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a {@link RedisServer} without persistence once per test class and stops it after the
 * class. Register it on a {@code static} field, since it uses class-level callbacks:
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension();
 * }</pre>
 * Static {@code @BeforeAll} methods of the class run after it, so they may use {@link #server()}.
 */
public final class RedisServerExtension implements BeforeAllCallback, AfterAllCallback {

    private RedisServer server;

    /** The class whose {@code beforeAll} started the server: only its {@code afterAll} stops it. */
    private String ownerId;

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (this.server == null) {
            this.server = RedisServer.start(false);
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
    public synchronized RedisServer server() {
        if (this.server == null) {
            throw new IllegalStateException("The Redis server runs only while its test class does");
        }
        return this.server;
    }

    /** Shortcut for {@code server().uri()}. */
    public String uri() {
        return server().uri();
    }
}
