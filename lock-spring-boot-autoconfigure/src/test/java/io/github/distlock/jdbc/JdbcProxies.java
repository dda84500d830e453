package io.github.distlock.jdbc;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;

import javax.sql.DataSource;

import io.github.distlock.testsupport.Delegation;
import org.jspecify.annotations.Nullable;

/** A pool whose connections run a test's hook before each call: where a frozen process would hang, say. */
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

    private static Connection calling(Connection connection, BeforeCall beforeCall) {
        return (Connection) Proxy.newProxyInstance(JdbcProxies.class.getClassLoader(),
                new Class<?>[] { Connection.class }, (proxy, method, args) -> {
                    beforeCall.run(method, args);
                    return Delegation.invoke(connection, method, args);
                });
    }
}
