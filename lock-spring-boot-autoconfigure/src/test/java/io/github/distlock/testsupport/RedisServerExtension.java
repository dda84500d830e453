package io.github.distlock.testsupport;

/**
 * Starts a {@link RedisServer} without persistence once per test class and stops it after the
 * class (see {@link ClassScopedServerExtension}):
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension redis = new RedisServerExtension();
 * }</pre>
 */
public final class RedisServerExtension extends ClassScopedServerExtension<RedisServer> {

    public RedisServerExtension() {
        super(() -> RedisServer.start(false), "The Redis server runs only while its test class does");
    }

    /** @return the running server */
    public RedisServer server() {
        return running();
    }

    /** Shortcut for {@code server().uri()}. */
    public String uri() {
        return server().uri();
    }
}
