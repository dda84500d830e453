package io.github.distlock.sample.store;

import java.time.Duration;

import io.github.distlock.jdbc.TestDatabase;
import io.github.distlock.testsupport.DatabaseServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link JdbcSampleStore} on a private PostgreSQL server, and bounded while the server is frozen
 * (SIGSTOP: connections stay open, nothing answers, the query timeout's cancel request cannot help):
 * calls fail after {@code sample.store.timeout}, and work again once the server continues.
 */
class PostgresSampleStoreIntegrationTests extends AbstractJdbcSampleStoreTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopDatabase() {
        if (database != null) {
            database.close();
        }
    }

    @Override
    protected TestDatabase database() {
        return database;
    }

    @Test
    void callsOnAFrozenServerFailAfterTheStoreTimeoutAndWorkAgainOnceItContinues() {
        JdbcSampleStore store = store("/frozen/", TIMEOUT);
        assertThat(store.createFenced("orders/1001", "new")).isTrue();
        DatabaseServer server = database.server();
        server.pause();
        try {
            assertUnavailableWithin(TIMEOUT.plusSeconds(2), () -> store.get("orders/1001"),
                    "the database did not answer within 3000 ms (read orders/1001)");
            assertUnavailableWithin(TIMEOUT.plusSeconds(2), () -> store.putFenced("orders/1001", "paid", 4),
                    "(write orders/1001)");
        }
        finally {
            server.resume();
        }
        await().atMost(Duration.ofSeconds(60)).ignoreException(StoreUnavailableException.class)
            .until(() -> store.get("orders/1001").isPresent());
        assertThat(store.putFenced("orders/1001", "paid", 5)).isEqualTo(SampleStore.FencedWrite.WRITTEN);
        assertThat(store.get("orders/1001")).contains("paid");
    }
}
