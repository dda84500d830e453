package io.github.distlock.store;

import java.util.HexFormat;
import java.util.function.IntPredicate;

/**
 * Turns a lock key into text a store can use inside its own names, so that every distinct Java
 * string stays a distinct name: {@code %} and the store's reserved characters become
 * {@code %XX} (hex of the character), and a lone UTF-16 surrogate (which UTF-8 cannot encode and
 * would turn into {@code ?}), like any character the store refuses, becomes {@code %uXXXX}.
 */
public final class KeyEscaper {

    /** Not String.format: a key near a store's size limit may have hundreds of thousands to escape. */
    private static final HexFormat HEX = HexFormat.of().withUpperCase();

    private final String reserved;

    private final IntPredicate alsoEscaped;

    /**
     * @param reserved characters that must not appear in an escaped key (each below U+0100);
     * {@code %} is always escaped
     */
    public KeyEscaper(String reserved) {
        this(reserved, c -> false);
    }

    /**
     * @param reserved characters that must not appear in an escaped key (each below U+0100);
     * {@code %} is always escaped
     * @param alsoEscaped further characters the store refuses in names, escaped as {@code %uXXXX}
     */
    public KeyEscaper(String reserved, IntPredicate alsoEscaped) {
        this.alsoEscaped = alsoEscaped;
        for (char c : reserved.toCharArray()) {
            if (c > 0xFF) {
                throw new IllegalArgumentException("Reserved characters are escaped as %XX, so must be below U+0100");
            }
        }
        this.reserved = reserved.indexOf('%') >= 0 ? reserved : reserved + '%';
    }

    /**
     * @param lockKey any string
     * @return the key with {@code %}, the reserved characters and lone surrogates escaped
     */
    public String escape(String lockKey) {
        StringBuilder escaped = new StringBuilder(lockKey.length() + 8);
        for (int i = 0; i < lockKey.length(); i++) {
            char c = lockKey.charAt(i);
            if (this.reserved.indexOf(c) >= 0) {
                escaped.append('%').append(HEX.toHexDigits((byte) c));
            }
            else if (this.alsoEscaped.test(c)) {
                escaped.append("%u").append(HEX.toHexDigits((short) c));
            }
            else if (Character.isHighSurrogate(c) && i + 1 < lockKey.length()
                    && Character.isLowSurrogate(lockKey.charAt(i + 1))) {
                escaped.append(c).append(lockKey.charAt(++i));
            }
            else if (Character.isSurrogate(c)) {
                // UTF-8 would turn a lone surrogate into '?': "a\uD800", "a\uDC00" and "a?" would share one lock.
                escaped.append("%u").append(HEX.toHexDigits((short) c));
            }
            else {
                escaped.append(c);
            }
        }
        return escaped.toString();
    }

    /**
     * @param lockKey any string
     * @return the length in UTF-8 bytes of {@link #escape escape(lockKey)}, counted without building it
     */
    public long escapedSize(String lockKey) {
        long size = 0;
        for (int i = 0; i < lockKey.length(); i++) {
            char c = lockKey.charAt(i);
            if (this.reserved.indexOf(c) >= 0) {
                size += 3;
            }
            else if (this.alsoEscaped.test(c)) {
                size += 6;
            }
            else if (Character.isHighSurrogate(c) && i + 1 < lockKey.length()
                    && Character.isLowSurrogate(lockKey.charAt(i + 1))) {
                size += 4;
                i++;
            }
            else if (Character.isSurrogate(c)) {
                size += 6;
            }
            else {
                size += (c < 0x80) ? 1 : (c < 0x800) ? 2 : 3;
            }
        }
        return size;
    }

    /**
     * Reads what {@link #escape} wrote; anything else (a name written by hand) is read literally,
     * never rejected.
     * @param escaped an escaped key
     * @return the key
     */
    public String unescape(String escaped) {
        StringBuilder key = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            char c = escaped.charAt(i);
            if (c == '%' && i + 3 <= escaped.length() && isHex(escaped, i + 1, i + 3)
                    && this.reserved.indexOf((char) Integer.parseInt(escaped.substring(i + 1, i + 3), 16)) >= 0) {
                key.append((char) Integer.parseInt(escaped.substring(i + 1, i + 3), 16));
                i += 2;
            }
            else if (escaped.startsWith("%u", i) && i + 6 <= escaped.length() && isHex(escaped, i + 2, i + 6)) {
                key.append((char) Integer.parseInt(escaped.substring(i + 2, i + 6), 16));
                i += 5;
            }
            else {
                key.append(c);
            }
        }
        return key.toString();
    }

    private static boolean isHex(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.digit(text.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
