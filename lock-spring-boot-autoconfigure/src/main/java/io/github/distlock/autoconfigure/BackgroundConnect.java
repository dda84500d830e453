package io.github.distlock.autoconfigure;

import io.github.distlock.InspectableLockRegistry;
import org.apache.commons.logging.Log;

/**
 * How a store configuration starts its registry: one line that says which store the locks use,
 * then a connect that does not make the application wait for the store.
 */
final class BackgroundConnect {

    private BackgroundConnect() {
    }

    /**
     * Logs at INFO, once per registry, which store the locks use, where, in which namespace and with
     * which lease: a misspelled property that leaves the defaults in place shows here.
     * @param description the store and where it is (never with a password), e.g. {@code etcd at [http://127.0.0.1:2379]}
     * @param namespace what separates this application's locks in the store, e.g. {@code namespace '/distlock/'}
     * @param lease how long a crashed holder can keep its keys, e.g. {@code lease TTL 10s}
     * @param logger the store configuration's logger
     */
    static void announce(String description, String namespace, String lease, Log logger) {
        logger.info("Distributed locks use " + description + ", " + namespace + ", " + lease);
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
