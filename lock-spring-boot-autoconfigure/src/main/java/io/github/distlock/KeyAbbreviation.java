package io.github.distlock;

/**
 * How exception messages and log lines show lock keys, which may be as long as a store's key size
 * limit allows (up to 1 MiB): a long key is cut to its start and its length. The exceptions of this
 * package use it for their messages; their {@code getKey()} keeps the whole key. Public so that
 * the stores' log lines show keys the same way; not meant for applications.
 */
public final class KeyAbbreviation {

    /** Characters of a long key (or of a store name made of it) a message shows. */
    public static final int SHOWN = 100;

    private KeyAbbreviation() {
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
