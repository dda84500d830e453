package io.github.distlock.health;

import java.time.Duration;

import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of a {@link ZookeeperLockRegistry}, as {@link LockRegistryHealthIndicator} reports it,
 * with the {@code sessionTimeout} ZooKeeper granted the current session once there is one: that
 * one, not the configured one, bounds how long a crashed holder blocks others. Details never
 * include the connect string or credentials.
 */
public class ZookeeperLockRegistryHealthIndicator extends LockRegistryHealthIndicator {

    private final ZookeeperLockRegistry registry;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     */
    public ZookeeperLockRegistryHealthIndicator(ZookeeperLockRegistry registry) {
        super(registry, "ZooKeeper");
        this.registry = registry;
    }

    @Override
    protected void storeDetails(Health.Builder builder) {
        Duration sessionTimeout = this.registry.getSessionTimeout();
        if (sessionTimeout != null) {
            builder.withDetail("sessionTimeout", print(sessionTimeout));
        }
    }
}
