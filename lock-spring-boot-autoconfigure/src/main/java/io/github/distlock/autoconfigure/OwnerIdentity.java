package io.github.distlock.autoconfigure;

import io.github.distlock.store.RegistrySettings;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The identity this instance records as the holder of its locks.
 */
final class OwnerIdentity {

    private OwnerIdentity() {
    }

    /**
     * Returns {@code distributed-lock.owner-identity} if set, else
     * {@code <spring.application.name>@<host>:<pid>}, or {@code <host>:<pid>} without an
     * application name. The host is {@code $HOSTNAME} if set (as in containers), else the local
     * host name.
     */
    static String resolve(DistributedLockProperties properties, Environment environment) {
        if (StringUtils.hasText(properties.getOwnerIdentity())) {
            return properties.getOwnerIdentity();
        }
        String process = RegistrySettings.processIdentity();
        String application = environment.getProperty("spring.application.name");
        return StringUtils.hasText(application) ? application + "@" + process : process;
    }
}
