package io.github.distlock.autoconfigure;

import io.github.distlock.redis.RedisLockRegistry;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Closes the auto-configured {@link RedisLockRegistry} when the application context stops, in
 * the phase just above its {@link LettuceConnectionFactory}'s. The factory shuts its Lettuce
 * client down when it stops, which comes before any bean is destroyed: closing the registry only
 * as a bean would be too late to remove its entries, and its locks would stay taken for a lease
 * TTL. Stopping here, the registry releases them at once. Phases stop from the highest down, so
 * the web server (which drains requests in a phase near {@link SmartLifecycle#DEFAULT_PHASE})
 * stops first, and locked requests still running at shutdown finish under their locks.
 *
 * <p>A closed registry cannot be reopened: a context that is started again after a stop (not a
 * restart of the application) has no Redis locks.
 */
final class RedisLockRegistryLifecycle implements SmartLifecycle {

    private final RedisLockRegistry registry;

    private final int phase;

    private volatile boolean running;

    RedisLockRegistryLifecycle(RedisLockRegistry registry, LettuceConnectionFactory connectionFactory) {
        this.registry = registry;
        int factoryPhase = connectionFactory.getPhase();
        this.phase = (factoryPhase == Integer.MAX_VALUE) ? factoryPhase : factoryPhase + 1;
    }

    @Override
    public void start() {
        this.running = true;
    }

    @Override
    public void stop() {
        this.running = false;
        this.registry.close();
    }

    @Override
    public boolean isRunning() {
        return this.running;
    }

    @Override
    public int getPhase() {
        return this.phase;
    }
}
