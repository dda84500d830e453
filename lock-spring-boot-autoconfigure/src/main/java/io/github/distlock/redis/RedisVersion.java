package io.github.distlock.redis;

import org.jspecify.annotations.Nullable;

/**
 * The version a Redis server reports ({@code redis_version} in {@code INFO server}), and whether
 * the store's scripts run on it: they read the server's clock ({@code TIME}) before they write,
 * which Redis before 5.0 refuses while it replicates scripts verbatim (its default), and 5.0
 * replicates their effects instead.
 *
 * @param text the version as the server wrote it, for messages
 * @param major its first number
 * @param minor its second number
 */
record RedisVersion(String text, int major, int minor) {

    /** The oldest version the scripts run on. */
    static final RedisVersion MINIMUM = new RedisVersion("5.0", 5, 0);

    private static final String FIELD = "redis_version:";

    /**
     * @param info the answer to {@code INFO server}
     * @return the version it reports, or {@code null} if it has no {@code redis_version} of the
     * form {@code <major>.<minor>...}
     */
    static @Nullable RedisVersion fromInfo(String info) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(FIELD)) {
                return parse(line.substring(FIELD.length()).strip());
            }
        }
        return null;
    }

    private static @Nullable RedisVersion parse(String text) {
        String[] parts = text.split("\\.");
        if (parts.length < 2 || !isNumber(parts[0]) || !isNumber(leadingDigits(parts[1]))) {
            return null;
        }
        try {
            return new RedisVersion(text, Integer.parseInt(parts[0]), Integer.parseInt(leadingDigits(parts[1])));
        }
        catch (NumberFormatException ex) {
            // More digits than an int holds: not a version any server reports.
            return null;
        }
    }

    /** A minor version may carry a suffix ({@code 0-rc1}): only its digits count. */
    private static String leadingDigits(String part) {
        int end = 0;
        while (end < part.length() && part.charAt(end) >= '0' && part.charAt(end) <= '9') {
            end++;
        }
        return part.substring(0, end);
    }

    private static boolean isNumber(String part) {
        return !part.isEmpty() && part.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** @return whether this version is {@code other} or later (by major and minor version) */
    boolean isAtLeast(RedisVersion other) {
        return this.major > other.major || (this.major == other.major && this.minor >= other.minor);
    }

    /** @return why the registry cannot work with a server of this version */
    String tooOld() {
        return "Redis " + this.text + " is too old for the lock registry, which needs Redis " + MINIMUM.text
                + " or later: its scripts read the server's clock (TIME) before they write, which Redis before "
                + MINIMUM.text + " refuses";
    }
}
