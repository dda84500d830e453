package io.github.distlock.redis;

import java.time.Duration;
import java.util.Objects;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.LockCore;
import io.github.distlock.store.RegistrySettings;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockRegistry} whose locks are shared by every process that uses the same Redis (a
 * primary, a Sentinel-managed primary, or a Redis Cluster) and namespace: the lock core
 * ({@link LockCore}: holds, reentrancy, the unfair gate, waiting, loss reporting) over the Redis
 * store, which decides who holds.
 *
 * <p><b>How it works.</b> Each lock key has a queue in Redis, kept by Lua scripts: an acquisition
 * adds an entry scored by a fence drawn from the key's counter and writes the entry's liveness key,
 * which expires after the lease TTL; the oldest entry whose liveness key exists holds. A release
 * removes the entry and publishes the next holder's id; waiters also check their place when the
 * holder's liveness key would expire and at least every third of the TTL (at most 5 s), since
 * pub/sub may drop a message. An uncontended {@code lock()} plus {@code unlock()} costs two Redis
 * round trips. All names of one lock share a hash tag, so they live in one Cluster slot.
 *
 * <p><b>Fair and unfair</b> acquisitions behave as on {@link io.github.distlock.etcd.EtcdLockRegistry}:
 * fair ones are served in arrival order across processes; unfair ones of one process first pass a
 * local gate; both share one queue per key.
 *
 * <p><b>Session.</b> One session per registry: a key renewed every third of the TTL, in one
 * pipelined batch with the liveness keys of every entry of the registry. If Redis acknowledges no
 * renewal within one TTL (measured on this process's monotonic clock from when the acknowledged
 * renewal was sent), or says a key is gone, the holds concerned are lost:
 * {@link FencedLock#isLockedByCurrentThread()} turns false and {@link FencedLock#unlock()} throws
 * {@link LockLostException}. A crashed process's locks are freed when its keys expire.
 *
 * <p><b>Fences</b> come from a per-key counter, and are never below the Redis server's clock in
 * microseconds: a fence is the counter plus one or the clock, whichever is larger. So fences keep
 * increasing after the counter expired with the last entry, after a restart without persistence,
 * and after a failover to a replica whose counter lags, as long as the servers' clocks agree to
 * within the time a failover takes and a key is not acquired more than a million times a second.
 *
 * <p><b>Limits.</b> Redis replicates asynchronously: a failover to a replica that missed the last
 * writes, or a restart without persistence, can let two processes hold a key at once, until the
 * older holder's next renewal (at once when its connection comes back, at most a third of the TTL
 * later) reports its hold lost. The newer holder's fence is larger, so a fenced resource rejects
 * the stale holder's writes.
 *
 * <p><b>Failures.</b> Every Redis call is bounded by the request timeout, whatever the client's
 * own command timeout; see {@link io.github.distlock.etcd.EtcdLockRegistry} for how timed and
 * untimed acquisitions treat failures. Both connections are probed with a {@code PING} every
 * sixth of the TTL, and replaced when they do not answer within a sixth of the TTL (at most the
 * request timeout): a connection that dies without a reset is replaced within a third of the TTL,
 * in time for the renewals. {@link #close()} removes this registry's entries, which
 * releases its locks; holds still open then report themselves lost. The client is not closed.
 *
 * <p><b>Redis 5.0 or later</b> is needed: each connection the registry opens checks the server's
 * version, and connecting fails with a message naming it on an older server.
 */
public final class RedisLockRegistry extends CoreLockRegistry<RedisLockStore> implements AutoCloseable {

    /** Default prefix of every Redis name the registry writes. */
    public static final String DEFAULT_NAMESPACE = "distributed-lock:";

    /** Default lease TTL of the session and entry keys. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

    /** Default bound on each Redis call. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    /** The shortest lease TTL: renewals every third of it must fit in a round trip with room to spare. */
    public static final Duration MIN_LEASE_TTL = Duration.ofMillis(300);

    private final Duration leaseTtl;

    private RedisLockRegistry(Builder builder) {
        super(builder.ownerIdentity, builder.localHandoff, (statistics, losses) -> new RedisLockStore(builder.client,
                new RedisKeyspace(builder.namespace), builder.leaseTtl, builder.requestTimeout, builder.ownerIdentity,
                builder.description, statistics, losses));
        this.leaseTtl = builder.leaseTtl;
    }

    /**
     * Starts building a registry on {@code client}.
     * @param client a Lettuce {@link RedisClient} (standalone or Sentinel) or
     * {@link RedisClusterClient} whose default URI is set (not closed by the registry)
     * @return a builder with the defaults
     */
    public static Builder builder(AbstractRedisClient client) {
        return new Builder(client);
    }

    /**
     * Why {@code namespace} cannot be a registry's namespace, or {@code null} if it can: the one
     * check behind {@link Builder#namespace(String)} and the {@code distributed-lock.redis.namespace}
     * property.
     * @param namespace a candidate namespace
     * @return a sentence fragment naming the value, or {@code null}
     */
    public static @Nullable String namespaceProblem(@Nullable String namespace) {
        return RedisKeyspace.namespaceProblem(namespace);
    }

    /**
     * Why {@code leaseTtl} cannot be a lease TTL, or {@code null} if it can.
     * @param leaseTtl a candidate TTL
     * @return a sentence fragment without the value, or {@code null}
     */
    public static @Nullable String leaseTtlProblem(@Nullable Duration leaseTtl) {
        if (leaseTtl == null || leaseTtl.compareTo(MIN_LEASE_TTL) < 0) {
            return "must be at least " + MIN_LEASE_TTL.toMillis() + "ms";
        }
        if (leaseTtl.toNanos() % 1_000_000 != 0) {
            return "must be a whole number of milliseconds";
        }
        return null;
    }

    /** @return the store behind this registry (its session, for tests in this package) */
    RedisLockStore redis() {
        return store();
    }

    /** @return the lease TTL of the session and entry keys */
    public Duration getLeaseTtl() {
        return this.leaseTtl;
    }

    /**
     * Removes every entry of this registry from Redis, which releases its locks; holds still open
     * report themselves lost and waiters fail. Idempotent.
     */
    @Override
    public void close() {
        redis().close();
    }

    // ---- for tests -----------------------------------------------------------------------------

    /** Threads of this registry waiting for {@code key}: at the unfair gate, or behind an older entry. */
    int queuedWaiters(String key) {
        return core().waitingThreadCount(key);
    }

    /** Removals of entries that Redis has not confirmed yet. */
    int pendingRemovals() {
        return redis().pendingRemovals();
    }

    /** The id of the current session, or {@code null} before the first. */
    @Nullable String sessionId() {
        RedisSession session = redis().session();
        return (session != null) ? session.id : null;
    }

    RedisKeyspace keyspace() {
        return redis().keyspace();
    }

    /** Runs {@code task} on the thread that renews the session and checks deadlines. */
    void runOnMaintenanceThread(Runnable task) {
        redis().runOnMaintenanceThread(task);
    }

    /** Builds a {@link RedisLockRegistry}. */
    public static final class Builder {

        private final AbstractRedisClient client;

        private String namespace = DEFAULT_NAMESPACE;

        private Duration leaseTtl = DEFAULT_LEASE_TTL;

        private String ownerIdentity = RegistrySettings.processIdentity();

        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private String description = "Redis";

        private LocalHandoff localHandoff = LocalHandoff.DEFAULT;

        private Builder(AbstractRedisClient client) {
            Objects.requireNonNull(client, "Redis client must not be null");
            if (!(client instanceof RedisClient) && !(client instanceof RedisClusterClient)) {
                throw new IllegalArgumentException("Redis client must be a Lettuce RedisClient or RedisClusterClient, "
                        + "but was " + client.getClass().getName());
            }
            this.client = client;
        }

        /**
         * Sets the prefix of every Redis name the registry writes (default {@value #DEFAULT_NAMESPACE}).
         * Registries on different namespaces never share or see each other's locks, also when one
         * namespace is a prefix of the other.
         * @param namespace a non-empty prefix without <code>{</code> or <code>}</code>
         * @return this builder
         */
        public Builder namespace(String namespace) {
            String problem = namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("Redis namespace " + problem);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * Sets the lease TTL (default 10 s): how long a crashed holder can block others, and how
         * long Redis may be unreachable before holds are considered lost.
         * @param leaseTtl whole milliseconds, at least {@link #MIN_LEASE_TTL}
         * @return this builder
         */
        public Builder leaseTtl(Duration leaseTtl) {
            String problem = leaseTtlProblem(leaseTtl);
            if (problem != null) {
                throw new IllegalArgumentException("Redis lease TTL " + problem + ", but was " + leaseTtl);
            }
            this.leaseTtl = leaseTtl;
            return this;
        }

        /**
         * Sets the identity stored with every entry, shown in errors and tools as the holder
         * (default {@code <host>:<pid>}); the thread name is appended per entry.
         * @param ownerIdentity a non-empty identity without line breaks
         * @return this builder
         */
        public Builder ownerIdentity(String ownerIdentity) {
            this.ownerIdentity = RegistrySettings.checkOwnerIdentity(ownerIdentity);
            return this;
        }

        /**
         * Sets the bound on each Redis call (default 5 s).
         * @param requestTimeout a positive duration
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = RegistrySettings.checkRequestTimeout(requestTimeout);
            return this;
        }

        /**
         * Names the Redis the client connects to, for messages only (never with a password).
         * @param description for example {@code Redis at 10.0.0.1:6379}
         * @return this builder
         */
        public Builder description(String description) {
            this.description = Objects.requireNonNull(description, "description must not be null");
            return this;
        }

        /**
         * Sets how unfair locks are shared among this process's threads without store round trips
         * (default {@link LocalHandoff#DEFAULT}): see {@link LocalHandoff}.
         * @param localHandoff the pass window and the linger
         * @return this builder
         */
        public Builder localHandoff(LocalHandoff localHandoff) {
            this.localHandoff = Objects.requireNonNull(localHandoff, "localHandoff must not be null");
            return this;
        }

        /** @return a new registry */
        public RedisLockRegistry build() {
            return new RedisLockRegistry(this);
        }
    }
}
