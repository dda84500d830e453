package io.github.distlock.sample.demo;

import java.time.Duration;

import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the orchestrator passes to its worker processes on the JDBC store: the lock settings and the
 * connection on their command line, the password in their environment only; and how it names the
 * database in its output, without credentials.
 */
class DemoOrchestratorTests {

    @Test
    void workersOnTheJdbcStoreGetTheLockSettingsAndConnectionWithThePasswordInTheirEnvironmentOnly() {
        DistributedLockProperties locks = new DistributedLockProperties();
        locks.setStore(Store.JDBC);
        locks.getJdbc().setTablePrefix("DEMO_");
        locks.getJdbc().setLeaseTtl(Duration.ofSeconds(6));
        MockEnvironment environment = new MockEnvironment()
            .withProperty("spring.datasource.url", "jdbc:postgresql://127.0.0.1:5433/postgres")
            .withProperty("spring.datasource.username", "distlock")
            .withProperty("spring.datasource.password", "s3cret");
        DemoOrchestrator orchestrator = new DemoOrchestrator(new DemoProperties(DemoProperties.Role.ORCHESTRATOR, 1, 3,
                2, Duration.ofSeconds(1), Duration.ofMillis(300), Duration.ofMillis(100), Duration.ofSeconds(60)), locks,
                null, environment);

        assertThat(orchestrator.storeArguments()).containsExactly("--distributed-lock.store=jdbc",
                "--distributed-lock.jdbc.table-prefix=DEMO_", "--distributed-lock.jdbc.lease-ttl=6000ms",
                "--distributed-lock.jdbc.request-timeout=5000ms", "--distributed-lock.jdbc.initialize-schema=embedded",
                "--spring.datasource.url=jdbc:postgresql://127.0.0.1:5433/postgres",
                "--spring.datasource.username=distlock");
        assertThat(orchestrator.storeEnvironment()).containsExactly(java.util.Map.entry("SPRING_DATASOURCE_PASSWORD", "s3cret"));
    }

    @Test
    void theDatabaseIsNamedFromItsUrlWithoutCredentials() {
        assertThat(DemoOrchestrator.databaseName("jdbc:postgresql://127.0.0.1:5432/postgres")).isEqualTo("PostgreSQL");
        assertThat(DemoOrchestrator.databaseName("jdbc:mariadb://db/orders")).isEqualTo("MariaDB");
        assertThat(DemoOrchestrator.databaseName("jdbc:h2:mem:sample")).isEqualTo("H2");
        assertThat(DemoOrchestrator.databaseName("jdbc:oracle:thin:@db:1521/orders")).isEqualTo("oracle");
        assertThat(DemoOrchestrator.withoutSecrets("jdbc:postgresql://app:s3cret@db:5432/orders?password=s3cret"))
            .isEqualTo("jdbc:postgresql://db:5432/orders");
        assertThat(DemoOrchestrator.withoutSecrets("jdbc:h2:mem:sample;PASSWORD=s3cret")).isEqualTo("jdbc:h2:mem:sample");
    }
}
