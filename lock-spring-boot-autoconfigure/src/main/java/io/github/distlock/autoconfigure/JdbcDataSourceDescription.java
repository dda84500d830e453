package io.github.distlock.autoconfigure;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.util.StringUtils;

/**
 * Names the application's database for messages and logs, from the JDBC URL its pool was configured
 * with, never with credentials: {@code the database at jdbc:postgresql://db:5432/orders}.
 */
final class JdbcDataSourceDescription {

    /** The bean properties under which pools keep their JDBC URL (HikariCP, DBCP2, Tomcat, Spring, H2, ...). */
    private static final String[] URL_PROPERTIES = { "jdbcUrl", "url", "URL" };

    /** {@code jdbc:<subprotocol>:} and what follows up to the first parameter. */
    private static final Pattern URL = Pattern.compile("(jdbc:[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*:)([^?;]*)");

    private JdbcDataSourceDescription() {
    }

    /**
     * @param dataSource the application's DataSource
     * @return the database as messages name it
     */
    static String of(DataSource dataSource) {
        String url = jdbcUrl(dataSource);
        return (url != null) ? "the database at " + withoutSecrets(url) : "the application's DataSource";
    }

    /**
     * @param dataSource a DataSource, possibly a Spring delegating one
     * @return the JDBC URL the pool (or driver data source) under it was configured with, if it says
     */
    static @Nullable String jdbcUrl(DataSource dataSource) {
        try {
            BeanWrapper pool = PropertyAccessorFactory.forBeanPropertyAccess(DataSourceUnwrapper.unwrapRoot(dataSource));
            for (String property : URL_PROPERTIES) {
                if (pool.isReadableProperty(property)
                        && pool.getPropertyValue(property) instanceof String url && url.startsWith("jdbc:")) {
                    return url;
                }
            }
        }
        catch (RuntimeException ex) {
            // A DataSource that does not tell: described without its URL.
        }
        return null;
    }

    /**
     * The URL without parameters (which may carry a password) and without a user or password before
     * a host. What is left is shown only if it has no other place for credentials (as Oracle's
     * {@code user/password@host} or MySQL's {@code (host=..,password=..)} forms).
     * @param url a JDBC URL
     * @return the URL's scheme, host, port and database, or only its scheme
     */
    static String withoutSecrets(String url) {
        Matcher matcher = URL.matcher(url);
        if (!matcher.lookingAt()) {
            return "a JDBC URL";
        }
        String scheme = matcher.group(1);
        String rest = matcher.group(2);
        if (rest.startsWith("//")) {
            int slash = rest.indexOf('/', 2);
            String authority = (slash >= 0) ? rest.substring(2, slash) : rest.substring(2);
            int at = authority.lastIndexOf('@');
            rest = "//" + authority.substring(at + 1) + ((slash >= 0) ? rest.substring(slash) : "");
        }
        if (!StringUtils.hasText(rest) || rest.contains("@") || rest.contains("=") || rest.contains("(")) {
            return scheme;
        }
        return scheme + rest;
    }
}
