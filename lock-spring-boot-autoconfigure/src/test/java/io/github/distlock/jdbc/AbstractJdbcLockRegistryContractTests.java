package io.github.distlock.jdbc;

import java.time.Duration;

import io.github.distlock.AbstractLockRegistryContractTests;
import io.github.distlock.LockRegistry;
import org.junit.jupiter.api.AfterAll;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The registry contract on a database: {@link #registry()} and {@link #peerRegistry()} use pools
 * and sessions of their own, as two processes would. Subclasses start their database with
 * {@link #start(TestDatabase.Kind)} from a {@code @BeforeAll}.
 */
abstract class AbstractJdbcLockRegistryContractTests extends AbstractLockRegistryContractTests {

    private static final String PREFIX = "CONTRACT_";

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
        // The TTL is far above responseTime(): an entry left behind would block the next waiter for
        // the rest of its TTL and fail the handoff bounds. Without notifications, waiters of the two
        // registries learn of each other's releases by polling: faster here, so that the contention
        // tests take seconds, not a minute.
        JdbcLockRegistry.Builder builder = JdbcLockRegistry.builder(database.pool(owner));
        if (database.kind() != TestDatabase.Kind.POSTGRESQL) {
            builder.pollInterval(Duration.ofMillis(10));
        }
        return builder
            .tablePrefix(PREFIX)
            .leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .description(database.kind() + " database")
            .build();
    }

    @AfterAll
    static void stop() {
        registry.close();
        peer.close();
        database.close();
    }

    @Override
    protected LockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected int waitersQueued(String key) {
        return registry.queuedWaiters(key) + peer.queuedWaiters(key);
    }

    @Override
    protected void assertNoTracesLeft(String key) {
        // The key's row stays until the idle-key sweep; it delays nobody, unlike an entry.
        await().atMost(responseTime()).untilAsserted(() -> assertThat(database.queryLong("SELECT COUNT(*) FROM "
                + PREFIX + "ENTRY WHERE LOCK_ID = '" + JdbcTables.lockId(key) + "'"))
            .as("entries left in the database for '%s'", key).isZero());
    }

    @Override
    protected int contentionIterations() {
        return 100;
    }
}
