package io.github.distlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.distlock.AbstractKeySizeLimitTests;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockRegistry;
import org.junit.jupiter.api.AfterAll;

/**
 * Key sizes on a database: the escaped key is limited to 1 MiB, since every acquisition writes it
 * (at 8 MiB, below what the databases refuse, a try-once's write did not finish within its second).
 * Subclasses start their database with {@link #start(TestDatabase.Kind)} from a {@code @BeforeAll}.
 */
abstract class AbstractJdbcKeySizeTests extends AbstractKeySizeLimitTests {

    private static final String PREFIX = "KEY_SIZE_";

    private static TestDatabase database;

    private static JdbcLockRegistry registry;

    private static JdbcLockRegistry peer;

    static void start(TestDatabase.Kind kind) {
        database = TestDatabase.start(kind);
        database.createTables(PREFIX);
        registry = newRegistry("registry");
        peer = newRegistry("peer");
    }

    private static JdbcLockRegistry newRegistry(String owner) {
        return JdbcLockRegistry.builder(database.pool(owner)).tablePrefix(PREFIX).leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner).description(database.kind() + " database").build();
    }

    @AfterAll
    static void stop() {
        registry.close();
        peer.close();
        database.close();
    }

    @Override
    protected InspectableLockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected long limit() {
        return 1024 * 1024;
    }

    /** The escaped key as {@code LOCK_KEY} keeps it: the table prefix is no part of it. */
    @Override
    protected long sizeOf(String key) {
        return JdbcTables.escape(key).getBytes(StandardCharsets.UTF_8).length;
    }
}
