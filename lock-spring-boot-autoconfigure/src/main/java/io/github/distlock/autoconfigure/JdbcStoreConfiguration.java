package io.github.distlock.autoconfigure;

import java.util.Arrays;

import javax.sql.DataSource;

import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Jdbc;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.jdbc.JdbcLockRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

/**
 * The JDBC lock registry, for {@code distributed-lock.store=jdbc}, on the application's
 * {@link DataSource}: the one Spring Boot configures under {@code spring.datasource} or the one the
 * application defines (the primary one, if there are several). The lock tables are created first
 * where {@code distributed-lock.jdbc.initialize-schema} says so ({@link JdbcLockSchemaInitializer}),
 * and the registry is created after them and after every other database initializer Spring Boot
 * knows (Flyway, Liquibase, {@code spring.sql.init} scripts), so that tables created by a migration
 * are there when it starts its session. The registry depends on the DataSource, so on shutdown it is
 * closed before the pool: it deletes its entries and its session, and the instance's locks are free
 * at once.
 *
 * <p>Without Spring Boot's JDBC support on the class path, or without a single DataSource bean,
 * start-up fails with a {@link NoDataSourceException} that says what to add. A {@code LockRegistry}
 * bean of the application replaces all of this.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnStore(Store.JDBC)
class JdbcStoreConfiguration {

    /** In spring-boot-jdbc, which brings spring-jdbc and spring-boot-sql. */
    static final String EMBEDDED_DATABASE_CONNECTION = "org.springframework.boot.jdbc.EmbeddedDatabaseConnection";

    static final String DEPENDS_ON_DATABASE_INITIALIZATION = "org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { EMBEDDED_DATABASE_CONNECTION, DEPENDS_ON_DATABASE_INITIALIZATION })
    @ConditionalOnMissingBean(LockRegistry.class)
    @ConditionalOnSingleCandidate(DataSource.class)
    @Import(DatabaseInitializationDependencyConfigurer.class)
    static class DataSourceRegistryConfiguration {

        private static final Log logger = LogFactory.getLog(JdbcStoreConfiguration.class);

        @Bean
        JdbcLockSchemaInitializer distributedLockSchemaInitializer(DataSource dataSource,
                DistributedLockProperties properties) {
            Jdbc jdbc = properties.getJdbc();
            return new JdbcLockSchemaInitializer(dataSource, jdbc.getTablePrefix(), jdbc.getInitializeSchema());
        }

        @Bean(destroyMethod = "close")
        @DependsOnDatabaseInitialization
        JdbcLockRegistry distributedLockRegistry(DataSource dataSource, JdbcLockSchemaInitializer schemaInitializer,
                DistributedLockProperties properties, Environment environment) {
            Jdbc jdbc = properties.getJdbc();
            String description = JdbcDataSourceDescription.of(dataSource);
            JdbcLockRegistry.Builder builder = JdbcLockRegistry.builder(dataSource)
                .tablePrefix(jdbc.getTablePrefix())
                .leaseTtl(jdbc.getLeaseTtl())
                .requestTimeout(jdbc.getRequestTimeout())
                .ownerIdentity(OwnerIdentity.resolve(properties, environment))
                .localHandoff(properties.getLocalHandoff().toLocalHandoff())
                .description(description);
            if (jdbc.getPollInterval() != null) {
                builder.pollInterval(jdbc.getPollInterval());
            }
            JdbcLockRegistry registry = builder.build();
            BackgroundConnect.announce(description, "tables " + jdbc.getTablePrefix() + "*",
                    "lease TTL " + PropertyChecks.print(jdbc.getLeaseTtl()), logger);
            BackgroundConnect.connect(registry, description, logger);
            return registry;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { EMBEDDED_DATABASE_CONNECTION, DEPENDS_ON_DATABASE_INITIALIZATION })
    @ConditionalOnMissingBean(LockRegistry.class)
    @Conditional(NoSingleDataSourceCondition.class)
    static class NoDataSourceConfiguration {

        @Bean
        LockRegistry distributedLockRegistry(ListableBeanFactory beanFactory) {
            String[] names = beanFactory.getBeanNamesForType(DataSource.class, true, false);
            throw (names.length == 0) ? NoDataSourceException.noDataSource()
                    : NoDataSourceException.ambiguous(Arrays.asList(names));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(SpringBootJdbcMissingCondition.class)
    @ConditionalOnMissingBean(LockRegistry.class)
    static class SpringBootJdbcMissingConfiguration {

        @Bean
        LockRegistry distributedLockRegistry() {
            throw NoDataSourceException.notOnClassPath();
        }
    }

    /** There is no DataSource bean, or several and none is primary. */
    static class NoSingleDataSourceCondition extends NoneNestedConditions {

        NoSingleDataSourceCondition() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnSingleCandidate(DataSource.class)
        static class SingleDataSource {

        }
    }

    /** Spring Boot's JDBC support (spring-boot-jdbc) is not on the class path. */
    static class SpringBootJdbcMissingCondition extends NoneNestedConditions {

        SpringBootJdbcMissingCondition() {
            super(ConfigurationPhase.PARSE_CONFIGURATION);
        }

        @ConditionalOnClass(name = { EMBEDDED_DATABASE_CONNECTION, DEPENDS_ON_DATABASE_INITIALIZATION })
        static class SpringBootJdbcPresent {

        }
    }
}
