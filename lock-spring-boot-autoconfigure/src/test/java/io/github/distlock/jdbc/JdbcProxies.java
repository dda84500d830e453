package io.github.distlock.jdbc;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import io.github.distlock.testsupport.Delegation;
import org.jspecify.annotations.Nullable;

/**
 * A pool whose connections run a test's hook before each call (where a frozen process would hang,
 * say), or that hands out connections of another pool from some moment on.
 */
final class JdbcProxies {

    /** Runs before a call of a connection's method, on the calling thread. */
    @FunctionalInterface
    interface BeforeCall {

        void run(Method method, @Nullable Object @Nullable [] args) throws Exception;
    }

    private JdbcProxies() {
    }

    /**
     * @param pool the real pool
     * @param beforeCall runs before each call of a method of a connection the pool hands out
     * @return the pool, as the store sees it
     */
    static DataSource connectionsCalling(DataSource pool, BeforeCall beforeCall) {
        return (DataSource) Proxy.newProxyInstance(JdbcProxies.class.getClassLoader(),
                new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
                    Object answer = Delegation.invoke(pool, method, args);
                    return (answer instanceof Connection connection) ? calling(connection, beforeCall) : answer;
                });
    }

    /**
     * @param first the pool whose connections are handed out first
     * @param then the pool whose connections are handed out once {@code switched} says so
     * @return the pool, as the store sees it
     */
    static DataSource switching(DataSource first, DataSource then, BooleanSupplier switched) {
        return (DataSource) Proxy.newProxyInstance(JdbcProxies.class.getClassLoader(),
                new Class<?>[] { DataSource.class },
                (proxy, method, args) -> Delegation.invoke(switched.getAsBoolean() ? then : first, method, args));
    }

    private static Connection calling(Connection connection, BeforeCall beforeCall) {
        return (Connection) Proxy.newProxyInstance(JdbcProxies.class.getClassLoader(),
                new Class<?>[] { Connection.class }, (proxy, method, args) -> {
                    beforeCall.run(method, args);
                    return Delegation.invoke(connection, method, args);
                });
    }
}
