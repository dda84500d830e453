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

    /** Throws if {@code problem}, a rule's verdict on {@code value}, names one. */
    static void check(String property, Duration value, @Nullable String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(property + " " + problem + ", but is '" + print(value) + "'");
        }
    }

    static String mask(@Nullable String secret) {
        return (secret != null) ? "******" : null;
    }

    private static String print(@Nullable Duration value) {
        return (value != null) ? DurationStyle.SIMPLE.print(value) : "null";
    }
}
