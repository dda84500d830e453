package io.github.distlock.autoconfigure;

import java.util.List;

/**
 * {@code distributed-lock.store=jdbc}, but the application has no DataSource the lock registry can
 * use: Spring Boot's JDBC support is not on the class path, there is no {@code DataSource} bean, or
 * there are several and none is primary. Says what to do about it.
 */
public class NoDataSourceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private static final String USES = "distributed-lock.store=jdbc keeps locks in the application's SQL database, "
            + "on its DataSource (as spring-boot-starter-jdbc configures it from spring.datasource), but ";

    private final String action;

    /**
     * Creates an exception.
     * @param problem what is wrong
     * @param action what to do about it
     */
    public NoDataSourceException(String problem, String action) {
        super(problem);
        this.action = action;
    }

    /** @return what to do about it */
    public String getAction() {
        return this.action;
    }

    static NoDataSourceException notOnClassPath() {
        return new NoDataSourceException(USES + "Spring Boot's JDBC support (org.springframework.boot:spring-boot-jdbc) "
                + "is not on the class path.",
                "Add org.springframework.boot:spring-boot-starter-jdbc (it brings Spring Boot's JDBC support and "
                        + "HikariCP) and the JDBC driver of the database (PostgreSQL, MySQL, MariaDB or H2), configure "
                        + "spring.datasource.url, username and password, or choose another distributed-lock.store.");
    }

    static NoDataSourceException noDataSource() {
        return new NoDataSourceException(USES + "there is no DataSource bean.",
                "Add org.springframework.boot:spring-boot-starter-jdbc and the JDBC driver of the database, configure "
                        + "spring.datasource.url, username and password, and do not exclude Spring Boot's "
                        + "DataSourceAutoConfiguration; or define a DataSource bean.");
    }

    static NoDataSourceException ambiguous(List<String> names) {
        return new NoDataSourceException(USES + "there are " + names.size() + " DataSource beans " + names
                + " and none is primary.",
                "Mark the DataSource the locks should use with @Primary, or define a LockRegistry bean "
                        + "(JdbcLockRegistry.builder(dataSource)...build()).");
    }
}
