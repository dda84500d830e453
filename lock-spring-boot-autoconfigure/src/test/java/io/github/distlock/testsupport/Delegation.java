package io.github.distlock.testsupport;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/** For test proxies that pass calls on to a real object, so that callers see its own exceptions. */
public final class Delegation {

    private Delegation() {
    }

    /**
     * Calls {@code method} on {@code target}.
     * @return what it returned
     * @throws Throwable what it threw, unwrapped from {@link InvocationTargetException}
     */
    public static @Nullable Object invoke(Object target, Method method, Object @Nullable [] args) throws Throwable {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException ex) {
            throw ex.getCause();
        }
    }
}
