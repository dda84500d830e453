package io.github.distlock.health;

import java.time.Duration;

import io.github.distlock.redis.RedisLockRegistry;

/**
 * Health of a {@link RedisLockRegistry}, as {@link LockRegistryHealthIndicator} reports it, with
 * the {@code leaseTtl} of its session and entry keys. Details never include credentials.
 */
public class RedisLockRegistryHealthIndicator extends LockRegistryHealthIndicator {

    private final RedisLockRegistry registry;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     */
    public RedisLockRegistryHealthIndicator(RedisLockRegistry registry) {
        super(registry, "Redis");
        this.registry = registry;
    }

    @Override
    protected Duration getLeaseTtl() {
        return this.registry.getLeaseTtl();
    }
}
