package io.github.distlock.store;

/** How log lines and messages show lock keys, which may be long (see {@link LockStore#maxKeySize()}). */
public final class LockKeys {

    /** Characters of a long key (or of a store name made of it) a log line shows. */
    static final int SHOWN = 100;

    private LockKeys() {
    }

    /**
     * @param key a lock key, or a store's name that contains one
     * @return the key if it has at most {@value #SHOWN} characters, else its start and its length:
     * {@code order-4...(2000000 chars)}
     */
    public static String abbreviate(String key) {
        if (key.length() <= SHOWN) {
            return key;
        }
        // Not between the halves of a surrogate pair: a lone half is no character.
        int end = Character.isHighSurrogate(key.charAt(SHOWN - 1)) ? SHOWN - 1 : SHOWN;
        return key.substring(0, end) + "...(" + key.length() + " chars)";
    }
}
