package io.github.distlock.store;

import io.github.distlock.KeyAbbreviation;

/**
 * How log lines and messages show lock keys, which may be long (see {@link LockStore#maxKeySize()}):
 * as the API's exceptions do ({@link KeyAbbreviation}).
 */
public final class LockKeys {

    private LockKeys() {
    }

    /**
     * @param key a lock key, or a store's name that contains one
     * @return the key if it has at most {@value KeyAbbreviation#SHOWN} characters, else its start
     * and its length: {@code order-4...(2000000 chars)}
     */
    public static String abbreviate(String key) {
        return KeyAbbreviation.abbreviate(key);
    }
}
