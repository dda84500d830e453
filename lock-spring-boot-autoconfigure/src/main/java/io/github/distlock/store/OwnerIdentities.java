package io.github.distlock.store;

import java.net.InetAddress;
import java.net.UnknownHostException;

import org.jspecify.annotations.Nullable;

/** The one rule for the identity a registry records with its entries, shared by every store's builder. */
public final class OwnerIdentities {

    private OwnerIdentities() {
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
    public static String check(@Nullable String ownerIdentity) {
        if (ownerIdentity == null || ownerIdentity.isBlank()) {
            throw new IllegalArgumentException("Owner identity must not be null or blank");
        }
        if (ownerIdentity.indexOf('\n') >= 0 || ownerIdentity.indexOf('\r') >= 0) {
            throw new IllegalArgumentException("Owner identity must not contain line breaks, but was '"
                    + ownerIdentity.replace("\n", "\\n").replace("\r", "\\r") + "'");
        }
        return ownerIdentity;
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
