package io.github.distlock.autoconfigure;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;

import io.github.distlock.store.RegistrySettings;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;

/**
 * Checks of property values that name the property and the value in their message: of one value
 * as it is bound ({@link IllegalArgumentException}), and of properties that only make sense
 * together, when they are used ({@link IllegalStateException}).
 */
final class PropertyChecks {

    private static final List<ChronoUnit> PRINTED_UNITS = List.of(ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES,
            ChronoUnit.SECONDS, ChronoUnit.MILLIS, ChronoUnit.MICROS);

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

    /**
     * A timeout that clients hold as int milliseconds (gRPC's connect timeout, a JDBC network
     * timeout): positive and at most {@link RegistrySettings#MAX_REQUEST_TIMEOUT} (24 days).
     */
    static void timeout(String property, Duration value) {
        positive(property, value);
        check(property, value,
                (value.compareTo(RegistrySettings.MAX_REQUEST_TIMEOUT) > 0) ? "must be at most 24 days" : null);
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

    /**
     * The value in the largest unit that holds it exactly ({@code 25d}, {@code -1s}, {@code 500ms}),
     * as messages and the start-up line show it.
     */
    static String print(@Nullable Duration value) {
        if (value == null) {
            return "null";
        }
        if (value.isZero()) {
            return "0ms";
        }
        for (ChronoUnit unit : PRINTED_UNITS) {
            Duration one = unit.getDuration();
            if (one.multipliedBy(value.dividedBy(one)).equals(value)) {
                return DurationStyle.SIMPLE.print(value, unit);
            }
        }
        return DurationStyle.SIMPLE.print(value, ChronoUnit.NANOS);
    }
}
