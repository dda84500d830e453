package io.github.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code LISTEN} connection of a PostgreSQL registry that dies without either end being told
 * (a NAT or firewall forgot it): the registry finds out and listens again, so releases keep waking
 * its waiters. The waiter polls only every minute (at least 45 s with jitter) and the holder's
 * session lasts two minutes (a waiter also looks when the holder's session would expire), so only
 * a notification can wake the waiter within the test's 30 s bound.
 */
@FaultInjectionTest
class PostgresListenerIntegrationTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final String KEY = "order-42";

    private TestDatabase database;

    private TcpProxy proxy;

    private JdbcLockRegistry holder;

    private JdbcLockRegistry waiter;

    @BeforeEach
    void start() {
        this.database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
        String prefix = "L" + UUID.randomUUID().toString().substring(0, 8).toUpperCase(java.util.Locale.ROOT) + "_";
        this.database.createTables(prefix);
        String server = this.database.jdbcUrl().replaceFirst("^jdbc:postgresql://([^/]+)/.*$", "$1");
        this.proxy = TcpProxy.start("http://" + server);
        this.holder = JdbcLockRegistry.builder(this.database.pool("holder")).tablePrefix(prefix)
            .ownerIdentity("holder").requestTimeout(Duration.ofSeconds(2)).leaseTtl(Duration.ofMinutes(2)).build();
        this.waiter = JdbcLockRegistry.builder(proxiedPool(server)).tablePrefix(prefix).ownerIdentity("waiter")
            .requestTimeout(Duration.ofSeconds(2)).pollInterval(Duration.ofMinutes(1)).build();
    }

    private HikariDataSource proxiedPool(String server) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(this.database.jdbcUrl().replace(server, this.proxy.endpoint().substring("http://".length())));
        config.setUsername(this.database.username());
        config.setPassword(this.database.password());
        config.setPoolName("waiter-through-proxy");
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(Duration.ofSeconds(3).toMillis());
        config.setValidationTimeout(Duration.ofSeconds(1).toMillis());
        return new HikariDataSource(config);
    }

    @AfterEach
    void stop() {
        if (this.waiter != null) {
            this.waiter.close();
        }
        if (this.holder != null) {
            this.holder.close();
        }
        if (this.proxy != null) {
            this.proxy.close();
        }
        this.database.close();
    }

    @Test
    void aListenConnectionThatDiedSilentlyIsReplacedAndReleasesWakeWaitersAgain() throws Exception {
        assertThat(handOverToWaiter()).as("woken by a notification before the connection died").isTrue();
        this.proxy.severOpenConnections();
        assertThat(handOverToWaiter()).as("woken by a notification after the connection died").isTrue();
    }

    /** The holder takes the key, the waiter queues, the holder releases: whether the waiter got it within the bound. */
    private boolean handOverToWaiter() throws Exception {
        FencedLock held = this.holder.obtain(KEY);
        assertThat(held.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> {
            FencedLock lock = this.waiter.obtain(KEY);
            try {
                if (!lock.tryLock(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                    return false;
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return false;
            }
            lock.unlock();
            return true;
        });
        await().atMost(BOUND).until(() -> this.holder.describeLock(KEY, 10).waiters().size() == 1);
        held.unlock();
        return waited.get(2 * BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }
}
