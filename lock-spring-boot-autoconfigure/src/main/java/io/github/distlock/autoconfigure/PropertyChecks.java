package io.github.distlock.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;

/**
 * Checks of property values that name the property and the value in their message: of one value
 * as it is bound ({@link IllegalArgumentException}), and of properties that only make sense
 * together, when they are used ({@link IllegalStateException}).
 */
final class PropertyChecks {

    private PropertyChecks() {
    }

    static void notNegative(String property, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException(property + " must not be negative, but is '" + print(value) + "'");
        }
    }

    static void notNegative(String property, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(property + " must not be negative, but is '" + value + "'");
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

    /**
     * Checks that two properties are set together or not at all.
     * @param first the first property's name
     * @param firstSet whether it is set
     * @param second the second property's name
     * @param secondSet whether it is set
     * @throws IllegalStateException naming both, if only one is set
     */
    static void together(String first, boolean firstSet, String second, boolean secondSet) {
        if (firstSet != secondSet) {
            throw new IllegalStateException(first + " and " + second + " must be set together, but only "
                    + (firstSet ? first : second) + " is set");
        }
    }

    static @Nullable String mask(@Nullable String secret) {
        return (secret != null) ? "******" : null;
    }

    private static String print(@Nullable Duration value) {
        return (value != null) ? DurationStyle.SIMPLE.print(value) : "null";
    }
}
