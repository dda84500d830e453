package io.github.distlock.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockRegistry;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.Locked;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.LockedService;
import io.github.distlock.autoconfigure.DistributedLockAutoConfigurationTests.OwnRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Jdbc.InitializeSchema;
import io.github.distlock.health.JdbcLockRegistryHealthIndicator;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.JdbcRegistrySettings;
import io.github.distlock.jdbc.JdbcSchema;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceInitializationAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@code distributed-lock.store=jdbc} on H2 in memory (and on file, which is not embedded): the
 * registry on the application's DataSource, the properties and their checks, when the lock tables
 * are created, ordering after other database initializers, shutdown, back-off, health, the meters
 * and the endpoint, and clear start-up failures without a usable DataSource. The same against a real
 * PostgreSQL server: {@link JdbcStoreIntegrationTests}.
 */
@ExtendWith(OutputCaptureExtension.class)
class JdbcStoreAutoConfigurationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private static final Set<String> DEFAULT_TABLES = Set.of("DISTRIBUTED_LOCK_ENTRY", "DISTRIBUTED_LOCK_LOCK_KEY",
            "DISTRIBUTED_LOCK_SESSION");

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withInitializer((context) -> context.getEnvironment().setConversionService(new ApplicationConversionService()))
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=jdbc", "distributed-lock.jdbc.request-timeout=2s");

    /** An H2 database in memory of its own, kept until the JVM ends so that it can be read after a context closed. */
    private static String newH2Url() {
        return "jdbc:h2:mem:distlock-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }

    private ApplicationContextRunner onH2(String url) {
        return this.contextRunner.withPropertyValues("spring.datasource.url=" + url);
    }

    @Test
    void locksOnTheApplicationsDataSourceWithTheDefaults() {
        String url = newH2Url();
        onH2(url).withUserConfiguration(LockedService.class).run((context) -> {
            assertThat(context).hasSingleBean(LockRegistry.class)
                .hasSingleBean(JdbcLockRegistry.class)
                .hasSingleBean(DataSource.class)
                .hasSingleBean(DistributedLockAdvisor.class);
            JdbcLockRegistry registry = context.getBean(JdbcLockRegistry.class);
            assertThat(registry.getNamespace()).isEqualTo("DISTRIBUTED_LOCK_");
            assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(10));
            assertThat(JdbcRegistrySettings.requestTimeout(registry)).isEqualTo(Duration.ofSeconds(2));
            assertThat(registry.getOwnerIdentity()).endsWith(":" + ProcessHandle.current().pid());
            // initialize-schema=embedded, and H2 in memory is embedded.
            assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isTrue();
            assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEqualTo(DEFAULT_TABLES);
            await().atMost(LONG).until(registry::isSessionAlive);
            // No poll interval configured: the registry's own for a database without notifications.
            assertThat(JdbcRegistrySettings.pollInterval(registry)).isEqualTo(Duration.ofMillis(50));

            FencedLock lock = registry.obtain("orders/7");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            try {
                // In this very database, through the application's DataSource.
                assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isOne();
                assertThat(registry.describeLock("orders/7", 10).holder().fence()).isEqualTo(lock.getFence());
            }
            finally {
                lock.unlock();
            }
            assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isZero();
            assertThat(context.getBean(Locked.class).key()).isEqualTo("locked");
            DistributedLockProperties.Jdbc properties = context.getBean(DistributedLockProperties.class).getJdbc();
            assertThat(properties.getInitializeSchema()).isEqualTo(InitializeSchema.EMBEDDED);
            assertThat(properties.getPollInterval()).isNull();
        });
    }

    @Test
    void defaultsAreTheRegistrysDefaults() {
        DistributedLockProperties.Jdbc defaults = new DistributedLockProperties().getJdbc();
        assertThat(defaults.getTablePrefix()).isEqualTo(JdbcLockRegistry.DEFAULT_TABLE_PREFIX);
        assertThat(defaults.getLeaseTtl()).isEqualTo(JdbcLockRegistry.DEFAULT_LEASE_TTL);
        assertThat(defaults.getRequestTimeout()).isEqualTo(JdbcLockRegistry.DEFAULT_REQUEST_TIMEOUT);
        assertThat(defaults.getPollInterval()).isNull();
        assertThat(defaults.getInitializeSchema()).isEqualTo(InitializeSchema.EMBEDDED);
    }

    @Test
    void bindsTheJdbcProperties() {
        String url = newH2Url();
        onH2(url)
            .withPropertyValues("distributed-lock.jdbc.table-prefix=billing_locks_", "distributed-lock.jdbc.lease-ttl=3",
                    "distributed-lock.jdbc.poll-interval=20ms", "distributed-lock.jdbc.request-timeout=750ms",
                    "distributed-lock.jdbc.initialize-schema=ALWAYS", "distributed-lock.owner-identity=billing-7")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                DistributedLockProperties.Jdbc properties = context.getBean(DistributedLockProperties.class).getJdbc();
                assertThat(properties.toString()).contains("tablePrefix = 'billing_locks_'", "leaseTtl = '3000ms'",
                        "pollInterval = '20ms'", "requestTimeout = '750ms'", "initializeSchema = ALWAYS");
                JdbcLockRegistry registry = context.getBean(JdbcLockRegistry.class);
                assertThat(registry.getNamespace()).isEqualTo("BILLING_LOCKS_");
                assertThat(registry.getLeaseTtl()).isEqualTo(Duration.ofSeconds(3));
                assertThat(JdbcRegistrySettings.pollInterval(registry)).isEqualTo(Duration.ofMillis(20));
                assertThat(JdbcRegistrySettings.requestTimeout(registry)).isEqualTo(Duration.ofMillis(750));
                // The table part of a prefix is upper case on every database.
                assertThat(lockTables(url, "BILLING_LOCKS_")).containsExactlyInAnyOrder("BILLING_LOCKS_ENTRY",
                        "BILLING_LOCKS_LOCK_KEY", "BILLING_LOCKS_SESSION");
                assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEmpty();
                FencedLock lock = registry.obtain("invoice");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                try {
                    assertThat(registry.describeLock("invoice", 10).holder().owner()).isEqualTo("billing-7");
                    assertThat(count(url, "SELECT COUNT(*) FROM BILLING_LOCKS_ENTRY")).isOne();
                }
                finally {
                    lock.unlock();
                }
            });
    }

    @Test
    void badPropertiesFailStartUpNamingPropertyAndValue() {
        assertStartUpFails("distributed-lock.jdbc.table-prefix=orders-locks_",
                "distributed-lock.jdbc.table-prefix must be letters, digits and underscores", "'orders-locks_'");
        assertStartUpFails("distributed-lock.jdbc.table-prefix=", "distributed-lock.jdbc.table-prefix must not be empty");
        assertStartUpFails("distributed-lock.jdbc.table-prefix=a.b.c_",
                "distributed-lock.jdbc.table-prefix must be letters, digits and underscores", "'a.b.c_'");
        assertStartUpFails("distributed-lock.jdbc.lease-ttl=500ms",
                "distributed-lock.jdbc.lease-ttl must be at least 1000ms, but is '500ms'");
        assertStartUpFails("distributed-lock.jdbc.lease-ttl=1500100us",
                "distributed-lock.jdbc.lease-ttl must be a whole number of milliseconds");
        assertStartUpFails("distributed-lock.jdbc.poll-interval=0",
                "distributed-lock.jdbc.poll-interval must be between 1ms and 1m, but is '0ms'");
        assertStartUpFails("distributed-lock.jdbc.poll-interval=2m",
                "distributed-lock.jdbc.poll-interval must be between 1ms and 1m, but is '2m'");
        assertStartUpFails("distributed-lock.jdbc.request-timeout=0",
                "distributed-lock.jdbc.request-timeout must be positive, but is '0ms'");
        this.contextRunner.withPropertyValues("distributed-lock.jdbc.initialize-schema=sometimes")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.jdbc.initialize-schema")
                .hasStackTraceContaining("sometimes"));
        this.contextRunner.withPropertyValues("distributed-lock.jdbc.lease-ttl=soon")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.jdbc.lease-ttl")
                .hasStackTraceContaining("soon"));
        // Not the store in use: its properties are still checked, as the other stores' are.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.jdbc.lease-ttl=10ms")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.jdbc.lease-ttl must be at least 1000ms"));
    }

    @Test
    void startUpSaysAtInfoWhichStoreTheLocksUseAndWhere(CapturedOutput output) {
        onH2(newH2Url()).withPropertyValues("distributed-lock.jdbc.table-prefix=ORDERS_LOCK_",
                "distributed-lock.jdbc.lease-ttl=15s").run((context) -> {
            String database = JdbcDataSourceDescription.of(context.getBean(DataSource.class));
            assertThat(database).startsWith("the database at jdbc:h2:mem:distlock-");
            assertThat(output.getAll().lines().filter((line) -> line.contains("Distributed locks use")))
                .singleElement()
                .satisfies((line) -> assertThat(line).contains("INFO")
                    .endsWith("Distributed locks use " + database + ", tables ORDERS_LOCK_*, lease TTL 15s"));
        });
    }

    @Test
    void embeddedModeLeavesADatabaseOnFileAlone(@TempDir Path directory, CapturedOutput output) {
        String url = "jdbc:h2:file:" + directory.resolve("orders");
        onH2(url).run((context) -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcLockRegistry.class);
            assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isFalse();
            assertThat(lockTables(context.getBean(DataSource.class), "DISTRIBUTED_LOCK_")).isEmpty();
            assertMissingTablesReported(context, output);
        });
    }

    @Test
    void alwaysModeCreatesTheTablesOnAnyDatabase(@TempDir Path directory) {
        String url = "jdbc:h2:file:" + directory.resolve("orders");
        onH2(url).withPropertyValues("distributed-lock.jdbc.initialize-schema=always").run((context) -> {
            assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isTrue();
            assertThat(lockTables(context.getBean(DataSource.class), "DISTRIBUTED_LOCK_")).isEqualTo(DEFAULT_TABLES);
            FencedLock lock = context.getBean(LockRegistry.class).obtain("on-file");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            lock.unlock();
        });
    }

    @Test
    void creatingTablesThatArePresentChangesNothing() throws SQLException {
        String url = newH2Url();
        try (HikariDataSource pool = pool(url)) {
            JdbcSchema.initialize(pool, "DISTRIBUTED_LOCK_");
        }
        for (String mode : new String[] { "embedded", "always" }) {
            onH2(url).withPropertyValues("distributed-lock.jdbc.initialize-schema=" + mode).run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isTrue();
                FencedLock lock = context.getBean(LockRegistry.class).obtain("present");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                lock.unlock();
            });
        }
        assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEqualTo(DEFAULT_TABLES);
    }

    @Test
    void neverModeCreatesNothingAndUsesTablesThatArePresent(CapturedOutput output) throws SQLException {
        String withoutTables = newH2Url();
        onH2(withoutTables).withPropertyValues("distributed-lock.jdbc.initialize-schema=never").run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isFalse();
            assertThat(lockTables(withoutTables, "DISTRIBUTED_LOCK_")).isEmpty();
            assertMissingTablesReported(context, output);
        });
        String withTables = newH2Url();
        try (HikariDataSource pool = pool(withTables)) {
            JdbcSchema.initialize(pool, "DISTRIBUTED_LOCK_");
        }
        onH2(withTables).withPropertyValues("distributed-lock.jdbc.initialize-schema=never").run((context) -> {
            FencedLock lock = context.getBean(LockRegistry.class).obtain("never");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(count(withTables, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isOne();
            lock.unlock();
        });
    }

    @Test
    void alwaysModeFailsStartUpWhenTheTablesCannotBeCreated(@TempDir Path directory) {
        // IFEXISTS: H2 refuses to create the database, so no statement can run.
        String url = "jdbc:h2:file:" + directory.resolve("absent") + ";IFEXISTS=TRUE";
        onH2(url)
            .withPropertyValues("distributed-lock.jdbc.initialize-schema=always",
                    "spring.datasource.hikari.connection-timeout=250")
            .run((context) -> assertThat(context).getFailure()
                .hasStackTraceContaining("distributed-lock.jdbc.initialize-schema=always: Could not create the lock "
                        + "tables DISTRIBUTED_LOCK_*"));
    }

    @Test
    void embeddedIsDecidedFromAConnectionWhenThePoolDoesNotTellItsUrl() {
        String url = newH2Url();
        this.contextRunner.withUserConfiguration(UrlLessDataSource.class)
            .withBean("url", String.class, () -> url)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(JdbcDataSourceDescription.jdbcUrl(context.getBean(DataSource.class))).isNull();
                assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isTrue();
                assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEqualTo(DEFAULT_TABLES);
            });
    }

    @Test
    void theRegistryStartsAfterSqlInitScriptsAndJdbcTemplatesAfterTheLockTables(CapturedOutput output) {
        // The application creates the tables itself, from the script in the jar, with spring.sql.init.
        String url = newH2Url();
        onH2(url)
            .withConfiguration(AutoConfigurations.of(DataSourceInitializationAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class))
            .withPropertyValues("distributed-lock.jdbc.initialize-schema=never",
                    "spring.sql.init.schema-locations=classpath:io/github/distlock/jdbc/schema-h2.sql")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                String[] scriptInitializers = context.getBeanNamesForType(DataSourceScriptDatabaseInitializer.class);
                assertThat(scriptInitializers).isNotEmpty();
                String[] lockSchemaInitializers = context.getBeanNamesForType(JdbcLockSchemaInitializer.class);
                assertThat(lockSchemaInitializers).containsExactly("distributedLockSchemaInitializer");
                var beanFactory = context.getBeanFactory();
                assertThat(beanFactory.getBeanDefinition("distributedLockRegistry").getDependsOn())
                    .contains(scriptInitializers)
                    .contains(lockSchemaInitializers);
                assertThat(beanFactory.getBeanDefinition("distributedLockSchemaInitializer").getDependsOn())
                    .contains(scriptInitializers);
                String[] templates = context.getBeanNamesForType(JdbcTemplate.class);
                assertThat(templates).isNotEmpty();
                assertThat(beanFactory.getBeanDefinition(templates[0]).getDependsOn()).contains(lockSchemaInitializers);
                // The tables were there when the registry connected at start-up.
                JdbcLockRegistry registry = context.getBean(JdbcLockRegistry.class);
                await().atMost(LONG).until(registry::isSessionAlive);
                assertThat(output).doesNotContain(JdbcDataSourceDescription.withoutSecrets(url) + " is not reachable yet");
            });
    }

    @Test
    void closingTheApplicationReleasesItsLocksAndEndsItsSession() throws SQLException {
        String url = newH2Url();
        onH2(url).run((context) -> {
            JdbcLockRegistry registry = context.getBean(JdbcLockRegistry.class);
            FencedLock lock = registry.obtain("shutdown");
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isOne();
            assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_SESSION")).isOne();
            HikariDataSource pool = (HikariDataSource) context.getBean(DataSource.class);
            context.close();
            // Deleted at once, not left to expire: the registry was closed before the pool.
            assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isZero();
            assertThat(count(url, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_SESSION")).isZero();
            assertThat(lock.isLockedByCurrentThread()).isFalse();
            assertThat(pool.isClosed()).isTrue();
            assertThatIllegalStateException().isThrownBy(() -> registry.obtain("after-close"));
        });
    }

    @Test
    void anApplicationRegistryReplacesTheJdbcOne() {
        String url = newH2Url();
        onH2(url).withUserConfiguration(OwnRegistry.class).run((context) -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(LockRegistry.class)
                .doesNotHaveBean(JdbcLockRegistry.class)
                .doesNotHaveBean(JdbcLockSchemaInitializer.class);
            assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEmpty();
        });
        // Also without Spring Boot's JDBC support or a DataSource: nothing asks for them then.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader("org.springframework.boot.jdbc"))
            .withPropertyValues("distributed-lock.store=jdbc")
            .withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class));
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=jdbc")
            .withUserConfiguration(OwnRegistry.class)
            .run((context) -> assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class));
    }

    @Test
    void anotherStoreLeavesTheDatabaseAlone() throws SQLException {
        String url = newH2Url();
        onH2(url).withPropertyValues("distributed-lock.store=in-memory").run((context) -> {
            assertThat(context).hasNotFailed()
                .doesNotHaveBean(JdbcLockRegistry.class)
                .doesNotHaveBean(JdbcLockSchemaInitializer.class);
            assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEmpty();
        });
        onH2(url).withPropertyValues("distributed-lock.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class));
        assertThat(lockTables(url, "DISTRIBUTED_LOCK_")).isEmpty();
    }

    @Test
    void withoutADataSourceStartUpFailsSayingWhatToAdd() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=jdbc")
            .run((context) -> {
                FailureAnalysis analysis = analyze(context);
                assertThat(analysis.getDescription()).startsWith("distributed-lock.store=jdbc keeps locks in the "
                        + "application's SQL database").endsWith("there is no DataSource bean.");
                assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc", "spring.datasource.url",
                        "define a DataSource bean");
            });
    }

    @Test
    void withSeveralDataSourcesTheLocksUseThePrimaryOne() {
        String primary = newH2Url();
        String other = newH2Url();
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=jdbc")
            .withBean("ordersDataSource", DataSource.class, () -> h2(primary), (definition) -> definition.setPrimary(true))
            .withBean("reportsDataSource", DataSource.class, () -> h2(other))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                FencedLock lock = context.getBean(LockRegistry.class).obtain("primary");
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                assertThat(count(primary, "SELECT COUNT(*) FROM DISTRIBUTED_LOCK_ENTRY")).isOne();
                assertThat(lockTables(other, "DISTRIBUTED_LOCK_")).isEmpty();
                lock.unlock();
            });
    }

    @Test
    void withSeveralDataSourcesAndNoPrimaryStartUpFailsNamingThem() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=jdbc")
            .withBean("ordersDataSource", DataSource.class, () -> h2(newH2Url()))
            .withBean("reportsDataSource", DataSource.class, () -> h2(newH2Url()))
            .run((context) -> {
                FailureAnalysis analysis = analyze(context);
                assertThat(analysis.getDescription())
                    .endsWith("there are 2 DataSource beans [ordersDataSource, reportsDataSource] and none is primary.");
                assertThat(analysis.getAction()).contains("@Primary");
            });
    }

    @Test
    void withoutSpringBootJdbcStartUpFailsSayingWhatToAdd() {
        // The application's own DataSource is not enough: embedded detection and initialization ordering need it.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader("org.springframework.boot.jdbc"))
            .withPropertyValues("distributed-lock.store=jdbc")
            .withBean(DataSource.class, () -> h2(newH2Url()))
            .run((context) -> {
                FailureAnalysis analysis = analyze(context);
                assertThat(analysis.getDescription()).contains("org.springframework.boot:spring-boot-jdbc")
                    .endsWith("is not on the class path.");
                assertThat(analysis.getAction()).startsWith("Add org.springframework.boot:spring-boot-starter-jdbc");
            });
    }

    @Test
    void anUnreachableDatabaseLogsAWarningNamingItWithoutCredentials(CapturedOutput output) {
        int closedPort = 1; // nothing listens on a privileged port
        this.contextRunner
            .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:" + closedPort
                    + "/orders?password=s3cret-value", "spring.datasource.username=app",
                    "spring.datasource.password=s3cret-value", "distributed-lock.jdbc.request-timeout=500ms")
            .run((context) -> {
                // Embedded or not is read from the URL: start-up did not wait for a connection.
                assertThat(context).hasNotFailed().hasSingleBean(JdbcLockRegistry.class);
                assertThat(context.getBean(JdbcLockSchemaInitializer.class).isInitialized()).isFalse();
                String where = "the database at jdbc:postgresql://127.0.0.1:" + closedPort + "/orders";
                await().atMost(LONG)
                    .untilAsserted(() -> assertThat(output).contains(where + " is not reachable yet; locks will connect on first use"));
                FencedLock lock = context.getBean(LockRegistry.class).obtain("unreachable");
                assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
                    .withMessageContaining(where);
            });
        assertThat(output).doesNotContain("s3cret-value");
    }

    @Test
    void describesTheDatabaseWithoutCredentials() {
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:postgresql://db.internal:5432/orders?password=x"))
            .isEqualTo("jdbc:postgresql://db.internal:5432/orders");
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:mysql://app:pw@db1:3306,db2:3306/orders"))
            .isEqualTo("jdbc:mysql://db1:3306,db2:3306/orders");
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:mariadb://app:p/w@db/orders")).isEqualTo("jdbc:mariadb:");
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:h2:mem:orders;PASSWORD=x")).isEqualTo("jdbc:h2:mem:orders");
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:oracle:thin:scott/tiger@db:1521/orders"))
            .isEqualTo("jdbc:oracle:thin:");
        assertThat(JdbcDataSourceDescription.withoutSecrets("jdbc:mysql://address=(host=db)(password=x)/orders"))
            .isEqualTo("jdbc:mysql:");
        assertThat(JdbcDataSourceDescription.withoutSecrets("not a url")).isEqualTo("a JDBC URL");
    }

    @Test
    void healthMetersAndTheEndpointShowAHeldJdbcLock() {
        HeldLockObservations.withMetersAndEndpoint(onH2(newH2Url()))
            .withConfiguration(AutoConfigurations.of(DistributedLockHealthAutoConfiguration.class))
            .run((context) -> {
                HealthIndicator indicator = context.getBean("distributedLockHealthIndicator", HealthIndicator.class);
                assertThat(indicator).isInstanceOf(JdbcLockRegistryHealthIndicator.class);
                await().atMost(LONG).until(() -> indicator.health().getStatus().equals(Status.UP));
                Health health = indicator.health();
                assertThat(health.getDetails()).containsEntry("namespace", "DISTRIBUTED_LOCK_")
                    .containsEntry("leaseTtl", "10s")
                    .containsEntry("sessionAlive", true)
                    .containsKey("sessionRenewalAge");
                HeldLockObservations.assertShowAHeldLock(context, JdbcLockRegistry.class, "DISTRIBUTED_LOCK_");
            });
    }

    /** Start-up went on, the connect attempt said what is missing, and locks fail until the tables exist. */
    private static void assertMissingTablesReported(AssertableApplicationContext context, CapturedOutput output) {
        String warning = JdbcDataSourceDescription.of(context.getBean(DataSource.class)) + " is not reachable yet";
        // The database's own message, which follows, may span lines.
        await().atMost(LONG).untilAsserted(() -> assertThat(output.getAll().lines().filter((line) -> line.contains(warning)))
            .singleElement(as(InstanceOfAssertFactories.STRING))
            .contains("The lock tables DISTRIBUTED_LOCK_* are missing"));
        assertThat(output).contains("or set distributed-lock.jdbc.initialize-schema=always");
        FencedLock lock = context.getBean(LockRegistry.class).obtain("no-tables");
        assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
            .withMessageContaining("are missing");
    }

    private void assertStartUpFails(String property, String... messages) {
        this.contextRunner.withPropertyValues(property).run((context) -> {
            assertThat(context).hasFailed();
            for (String message : messages) {
                assertThat(context).getFailure().hasStackTraceContaining(message);
            }
        });
    }

    /** The start-up failure as the failure analyzer explains it. */
    private static FailureAnalysis analyze(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        assertThat(context.getStartupFailure()).rootCause().isInstanceOf(NoDataSourceException.class);
        FailureAnalysis analysis = new NoDataSourceFailureAnalyzer().analyze(context.getStartupFailure());
        assertThat(analysis).as(stackTrace(context.getStartupFailure())).isNotNull();
        return analysis;
    }

    private static DataSource h2(String url) {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL(url);
        dataSource.setUser("sa");
        return dataSource;
    }

    private static HikariDataSource pool(String url) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(url);
        pool.setUsername("sa");
        return pool;
    }

    /** The names of the tables whose names start with {@code prefix}. */
    private static Set<String> lockTables(String url, String prefix) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url, "sa", "")) {
            return lockTables(connection, prefix);
        }
    }

    private static Set<String> lockTables(DataSource dataSource, String prefix) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return lockTables(connection, prefix);
        }
    }

    private static Set<String> lockTables(Connection connection, String prefix) throws SQLException {
        Set<String> names = new TreeSet<>();
        DatabaseMetaData metaData = connection.getMetaData();
        try (ResultSet tables = metaData.getTables(null, null, "%", new String[] { "TABLE" })) {
            while (tables.next()) {
                String name = tables.getString("TABLE_NAME");
                if (name.startsWith(prefix)) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    private static long count(String url, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url, "sa", "");
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static String stackTrace(Throwable failure) {
        StringWriter writer = new StringWriter();
        failure.printStackTrace(new PrintWriter(writer));
        return writer.toString();
    }

    /** A DataSource that does not tell its URL (no bean property names it), as some wrappers do. */
    @Configuration(proxyBeanMethods = false)
    static class UrlLessDataSource {

        @Bean
        @Primary
        DataSource dataSource(String url) {
            DataSource h2 = h2(url);
            return new DataSource() {

                @Override
                public Connection getConnection() throws SQLException {
                    return h2.getConnection();
                }

                @Override
                public Connection getConnection(String username, String password) throws SQLException {
                    return h2.getConnection(username, password);
                }

                @Override
                public PrintWriter getLogWriter() throws SQLException {
                    return h2.getLogWriter();
                }

                @Override
                public void setLogWriter(PrintWriter out) throws SQLException {
                    h2.setLogWriter(out);
                }

                @Override
                public void setLoginTimeout(int seconds) throws SQLException {
                    h2.setLoginTimeout(seconds);
                }

                @Override
                public int getLoginTimeout() throws SQLException {
                    return h2.getLoginTimeout();
                }

                @Override
                public java.util.logging.Logger getParentLogger() {
                    return java.util.logging.Logger.getGlobal();
                }

                @Override
                public <T> T unwrap(Class<T> iface) throws SQLException {
                    throw new SQLException("Not a wrapper");
                }

                @Override
                public boolean isWrapperFor(Class<?> iface) {
                    return false;
                }
            };
        }
    }
}
