package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.Objects;

import io.github.distlock.LocalHandoff;
import io.github.distlock.LockRegistry;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.LockCore;
import io.github.distlock.store.RegistrySettings;
import org.apache.curator.framework.CuratorFramework;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockRegistry} whose locks are shared by every process that uses the same ZooKeeper
 * ensemble and namespace: the lock core ({@link LockCore}) over the ZooKeeper store, on the
 * application's started {@link CuratorFramework} (which keeps the connection and the session).
 *
 * <p><b>How it works.</b> Each lock key has a container node; an acquisition creates an ephemeral
 * sequential entry in it (with Curator's protection, so a create whose answer was lost is not
 * duplicated); the lowest sequence holds; each waiter watches only the entry before it. The fence
 * of a hold is its entry's creation zxid. Entries are ephemeral, so a crashed process's locks are
 * freed when ZooKeeper expires its session (the negotiated session timeout).
 *
 * <p><b>Session.</b> Holds are reported lost half a session timeout after the last contact the
 * ensemble's leader confirmed (a {@code sync} every eighth of the timeout, as measured on this
 * process's clock), connected or not: safe for session timeouts of three server ticks or more.
 * After a session expired, later acquisitions use the client's new session.
 * {@link #close()} deletes this registry's entries; the client is not closed.
 */
public final class ZookeeperLockRegistry extends CoreLockRegistry<ZookeeperLockStore> implements AutoCloseable {

    /** Default namespace: the znode under which all lock nodes live. */
    public static final String DEFAULT_NAMESPACE = "/distributed-lock";

    /** Default bound on each ZooKeeper call. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private ZookeeperLockRegistry(Builder builder) {
        super(builder.ownerIdentity, builder.localHandoff, (statistics, losses) -> new ZookeeperLockStore(builder.client,
                new ZookeeperKeyspace(builder.namespace), builder.requestTimeout, builder.ownerIdentity,
                builder.description, statistics, losses));
        if (builder.requestedSessionTimeout != null) {
            zookeeper().expectSessionTimeout(builder.requestedSessionTimeout);
        }
    }

    /**
     * Starts building a registry on {@code client}.
     * @param client a started Curator client (not closed by the registry)
     * @return a builder with the defaults
     */
    public static Builder builder(CuratorFramework client) {
        return new Builder(client);
    }

    /**
     * Why {@code namespace} cannot be a registry's namespace, or {@code null} if it can.
     * @param namespace a candidate namespace
     * @return a sentence fragment naming the value, or {@code null}
     */
    public static @Nullable String namespaceProblem(@Nullable String namespace) {
        return ZookeeperKeyspace.namespaceProblem(namespace);
    }

    /** @return the store behind this registry (its session, for tests in this package) */
    ZookeeperLockStore zookeeper() {
        return store();
    }

    /** @return the session timeout ZooKeeper granted the current session, or {@code null} before the first */
    public @Nullable Duration getSessionTimeout() {
        ZookeeperSession session = zookeeper().session();
        return (session != null) ? Duration.ofMillis(session.timeoutMillis) : null;
    }

    /**
     * Deletes every entry of this registry, which releases its locks; holds still open report
     * themselves lost and waiters fail. Idempotent.
     */
    @Override
    public void close() {
        zookeeper().close();
    }

    // ---- for tests -----------------------------------------------------------------------------

    int queuedWaiters(String key) {
        return core().waitingThreadCount(key);
    }

    /** @return the mark in the names of this registry's entries */
    String entryTag() {
        return zookeeper().tag();
    }

    /** @return whether a create of an entry of the lock is waiting for its answer */
    boolean isCreateInFlight(String key) {
        return zookeeper().isCreateInFlight(key);
    }

    ZookeeperKeyspace keyspace() {
        return zookeeper().keyspace();
    }

    /** Builds a {@link ZookeeperLockRegistry}. */
    public static final class Builder {

        private final CuratorFramework client;

        private String namespace = DEFAULT_NAMESPACE;

        private String ownerIdentity = RegistrySettings.processIdentity();

        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private String description = "ZooKeeper";

        private LocalHandoff localHandoff = LocalHandoff.DEFAULT;

        private @Nullable Duration requestedSessionTimeout;

        private Builder(CuratorFramework client) {
            this.client = Objects.requireNonNull(client, "Curator client must not be null");
        }

        /**
         * Sets the znode under which lock nodes live (default {@value #DEFAULT_NAMESPACE}), created
         * when missing. Registries on different namespaces never share or see each other's locks,
         * also when one is nested in the other.
         * @param namespace an absolute path without a trailing {@code /} and without {@code #}
         * @return this builder
         */
        public Builder namespace(String namespace) {
            String problem = namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("ZooKeeper namespace " + problem);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * Sets the identity stored with every entry (default {@code <host>:<pid>}).
         * @param ownerIdentity a non-empty identity without line breaks
         * @return this builder
         */
        public Builder ownerIdentity(String ownerIdentity) {
            this.ownerIdentity = RegistrySettings.checkOwnerIdentity(ownerIdentity);
            return this;
        }

        /**
         * Sets the bound on each ZooKeeper call (default 5 s).
         * @param requestTimeout a positive duration
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = RegistrySettings.checkRequestTimeout(requestTimeout);
            return this;
        }

        /**
         * Names the ensemble, for messages only.
         * @param description for example {@code ZooKeeper at zk1:2181,zk2:2181}
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

        /**
         * Tells the registry the session timeout the Curator client asked for. ZooKeeper grants
         * one within its own bounds (by default 2 to 20 of its ticks), and the granted one is what
         * frees a crashed holder's locks: the registry logs a WARN once if it differs.
         * @param requestedSessionTimeout the client's requested session timeout
         * @return this builder
         */
        public Builder requestedSessionTimeout(Duration requestedSessionTimeout) {
            this.requestedSessionTimeout = Objects.requireNonNull(requestedSessionTimeout,
                    "requestedSessionTimeout must not be null");
            return this;
        }

        /** @return a new registry */
        public ZookeeperLockRegistry build() {
            return new ZookeeperLockRegistry(this);
        }
    }
}
