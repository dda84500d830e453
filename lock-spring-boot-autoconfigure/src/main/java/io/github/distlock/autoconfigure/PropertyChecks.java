package io.github.distlock.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;

/**
 * Checks of property values that name the property and the value in their message.
 */
final class PropertyChecks {

    private PropertyChecks() {
    }

    static void notNegative(String property, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException(property + " must not be negative, but is '" + print(value) + "'");
        }
    }

    static void positive(String property, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, but is '" + print(value) + "'");
        }
    }

    static void wholeSeconds(String property, Duration value) {
        if (value == null || value.getSeconds() < 1 || value.getNano() != 0) {
            throw new IllegalArgumentException(
                    property + " must be a whole number of seconds, at least 1s, but is '" + print(value) + "'");
        }
    }

    static String mask(@Nullable String secret) {
        return (secret != null) ? "******" : null;
    }

    private static String print(@Nullable Duration value) {
        return (value != null) ? DurationStyle.SIMPLE.print(value) : "null";
    }
}
