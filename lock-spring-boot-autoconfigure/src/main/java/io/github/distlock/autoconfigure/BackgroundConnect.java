package io.github.distlock.autoconfigure;

import io.github.distlock.InspectableLockRegistry;
import org.apache.commons.logging.Log;

/** How a store configuration connects its registry at start-up without making the application wait for the store. */
final class BackgroundConnect {

    private BackgroundConnect() {
    }

    /**
     * Connects in the background, so that the first locked call (say a scheduled job that tries
     * once) does not pay for it; an unreachable store must not stop the application, so it is
     * only logged.
     * @param registry the registry
     * @param description where the store is, for the log (never with a password)
     * @param logger the store configuration's logger
     */
    static void connect(InspectableLockRegistry registry, String description, Log logger) {
        registry.connect().whenComplete((connected, failure) -> {
            if (failure != null) {
                Throwable cause = (failure.getCause() != null) ? failure.getCause() : failure;
                logger.warn(description + " is not reachable yet; locks will connect on first use: "
                        + cause.getMessage());
            }
        });
    }
}
