package io.github.distlock.integration;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A distlock {@link LockRegistry} seen as a Spring Integration
 * {@link org.springframework.integration.support.locks.LockRegistry}: what
 * {@code LockRegistryLeaderInitiator}, aggregators and {@code LockRequestHandlerAdvice} take, on
 * etcd, Redis, ZooKeeper, a SQL database or in memory.
 *
 * <p>Spring Integration's lock keys are objects; the lock key is their {@link Object#toString()},
 * verbatim, so two key objects with the same string share one lock. The locks handed out are the
 * registry's own {@link FencedLock}s, with their whole contract: reentrant, only the holding thread
 * unlocks, a {@linkplain FencedLock#getFence() fence} per acquisition, and a lost hold reported
 * instead of ignored. Their exceptions are the registry's, and each already is what Spring
 * Integration's callers expect of a {@link java.util.concurrent.locks.Lock}:
 * <ul>
 * <li>{@link LockLostException}, from {@code unlock()} and from acquiring the key again on a thread
 * whose hold was lost (the lease expired, for example while the process was paused), is an
 * {@link IllegalMonitorStateException}, which {@code Lock.unlock()} throws when the caller does not
 * hold the lock. {@code LockRegistryLeaderInitiator} re-acquires its lock on every heartbeat, so it
 * takes the exception as a broken lock and revokes leadership;</li>
 * <li>{@link LockAcquisitionException}, when the store fails or cannot be reached while acquiring,
 * is a {@link RuntimeException}: the leader initiator retries after its busy-wait interval,
 * {@code executeLocked} passes it on;</li>
 * <li>a timed {@code tryLock} that simply does not get the lock returns {@code false}, which
 * {@code executeLocked(key, Duration, ...)} turns into a {@link java.util.concurrent.TimeoutException}.</li>
 * </ul>
 * A {@code null} key, or one whose {@code toString()} is {@code null} or empty, is rejected with
 * {@link IllegalArgumentException} naming the key's class.
 *
 * <p>Locks are fair by default: for leader election, a leader that releases or yields its lock
 * hands leadership to the candidate that has waited longest, in whichever process, and every
 * candidate keeps its own place in the store's queue. Unfair locks queue the threads of one process
 * locally first (one store entry per key and process), which suits many threads of one application
 * contending for the same keys, as aggregators do; choose with
 * {@link #DistributedLockIntegrationRegistry(LockRegistry, boolean)}.
 *
 * <p>Spring Integration's optional capabilities are not implemented, on purpose:
 * {@code RenewableLockRegistry} and {@code DistributedLock} set a time to live per lock, while the
 * registry keeps every hold of a process alive through one session lease that it renews itself (its
 * TTL is the registry's configuration); {@code ExpirableLockRegistry} evicts cached lock objects,
 * and this registry caches none ({@link #obtain} is cheap and talks to no store).
 */
public final class DistributedLockIntegrationRegistry
        implements org.springframework.integration.support.locks.LockRegistry<FencedLock> {

    private final LockRegistry registry;

    private final boolean fair;

    /**
     * Adapts {@code registry}, handing out fair locks.
     * @param registry the distlock registry that keeps the locks
     */
    public DistributedLockIntegrationRegistry(LockRegistry registry) {
        this(registry, true);
    }

    /**
     * Adapts {@code registry}.
     * @param registry the distlock registry that keeps the locks
     * @param fair whether the locks handed out wait in arrival order
     */
    public DistributedLockIntegrationRegistry(LockRegistry registry, boolean fair) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        this.registry = registry;
        this.fair = fair;
    }

    /**
     * Returns the lock of {@code lockKey.toString()}.
     * @param lockKey any object whose {@code toString()} is not empty
     * @return the registry's lock for that key, fair or not as this adapter was built
     * @throws IllegalArgumentException if {@code lockKey} is {@code null} or its {@code toString()}
     * is {@code null} or empty
     */
    @Override
    public FencedLock obtain(@Nullable Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("Spring Integration lock key must not be null");
        }
        String key = lockKey.toString();
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("Spring Integration lock key of type " + lockKey.getClass().getName()
                    + " has " + ((key == null) ? "a null" : "an empty") + " toString(), which cannot name a lock");
        }
        return this.registry.obtain(key, this.fair);
    }

    /** @return whether the locks handed out wait in arrival order */
    public boolean isFair() {
        return this.fair;
    }

    /** @return the distlock registry that keeps the locks */
    public LockRegistry getRegistry() {
        return this.registry;
    }

    @Override
    public String toString() {
        return "DistributedLockIntegrationRegistry[" + this.registry + ", fair=" + this.fair + "]";
    }
}
