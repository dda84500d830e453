package io.github.distlock.store;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/** The rules every store's registry builder applies to the settings they share: owner identity and request timeout. */
public final class RegistrySettings {

    private RegistrySettings() {
    }

    /**
     * @return {@code <host>:<pid>}: the host is {@code $HOSTNAME} if set (as in containers), else
     * the local host name
     */
    public static String processIdentity() {
        return hostName() + ":" + ProcessHandle.current().pid();
    }

    /**
     * Checks an owner identity: entry values are line-based (owner, thread, time).
     * @param ownerIdentity a candidate identity
     * @return the identity
     * @throws IllegalArgumentException if it is null, blank or contains a line break
     */
    public static String checkOwnerIdentity(@Nullable String ownerIdentity) {
        if (ownerIdentity == null || ownerIdentity.isBlank()) {
            throw new IllegalArgumentException("Owner identity must not be null or blank");
        }
        if (ownerIdentity.indexOf('\n') >= 0 || ownerIdentity.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("Owner identity must not contain line breaks, but was '"
                    + ownerIdentity.replace("\n", "\\n").replace("\r", "\\r") + "'");
        }
        return ownerIdentity;
    }

    /**
     * The longest request timeout: drivers hold their timeouts as int milliseconds (a JDBC
     * connection's network timeout, which adds a second to it; Curator's), and anything longer
     * overflowed there into a failure of every call.
     */
    public static final Duration MAX_REQUEST_TIMEOUT = Duration.ofDays(24);

    /**
     * Checks a bound on each store call.
     * @param requestTimeout a candidate timeout
     * @return the timeout
     * @throws IllegalArgumentException if it is null, zero, negative or longer than {@link #MAX_REQUEST_TIMEOUT}
     */
    public static Duration checkRequestTimeout(@Nullable Duration requestTimeout) {
        if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("Request timeout must be positive, but was " + requestTimeout);
        }
        if (requestTimeout.compareTo(MAX_REQUEST_TIMEOUT) > 0) {
            throw new IllegalArgumentException("Request timeout must be at most 24 days, but was " + requestTimeout);
        }
        return requestTimeout;
    }

    private static String hostName() {
        String fromEnvironment = System.getenv("HOSTNAME");
        if (fromEnvironment != null && !fromEnvironment.isBlank()) {
            return fromEnvironment;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (UnknownHostException ex) {
            return "unknown-host";
        }
    }
}
