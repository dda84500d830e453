package io.github.distlock.etcd;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.LockCore;
import io.github.distlock.store.RegistrySettings;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockRegistry} whose locks are shared by every process that uses the same etcd cluster
 * and namespace: the lock core ({@link LockCore}: holds, reentrancy, the unfair gate, waiting,
 * loss reporting) over the etcd store, which decides who holds.
 *
 * <p><b>How it works.</b> Each lock key has a queue in etcd: an acquisition writes an entry under
 * the key's root, attached to the registry's session lease, and owns the lock when its entry is
 * the oldest (lowest create revision). A waiter waits for the deletion of the entry just before
 * its own, delivered by one watch stream per registry. The fence of a hold is its entry's create
 * revision. An uncontended {@code lock()} plus {@code unlock()} costs two etcd round trips.
 *
 * <p><b>Fair and unfair.</b> Fair acquisitions take their place in the etcd queue the moment they
 * start waiting, so fair waiters are served in arrival order across all threads of all processes.
 * Unfair acquisitions of one process first pass a local, barging gate, so at most one of them per
 * key and process waits in etcd; they make no ordering promise. Fair and unfair acquisitions of a
 * key share one queue and exclude each other.
 *
 * <p><b>Session.</b> One lease per registry, granted at the first acquisition and renewed every
 * third of its TTL. If etcd does not acknowledge a renewal within one TTL (measured on this
 * process's monotonic clock from when the acknowledged renewal was sent), every hold under the
 * lease is considered lost: {@link FencedLock#isLockedByCurrentThread()} turns false and
 * {@link FencedLock#unlock()} throws {@link LockLostException}. Later acquisitions start a new
 * session. A crashed process's locks are freed when its lease expires, after at most one TTL.
 *
 * <p><b>Failures.</b> Every etcd request is bounded by the request timeout. A timed acquisition
 * retries transient etcd failures until its timeout and then throws
 * {@link LockAcquisitionException}; an untimed one ({@code lock()}) throws once etcd has failed
 * for longer than the request timeout. A zero or negative timeout makes one attempt, which may
 * take up to {@code min(request timeout, 1 s)} when etcd is slow; so may a timed attempt whose
 * timeout is shorter than that. Entries of waiters that give up are deleted in the background,
 * retried until etcd confirms.
 *
 * <p>{@link #close()} revokes the lease, which releases every lock held through this registry;
 * holds still open then report themselves lost. The {@link Client} is not closed.
 */
public final class EtcdLockRegistry extends CoreLockRegistry<EtcdLockStore> implements AutoCloseable {

    /** Default namespace under which all lock entries live. */
    public static final String DEFAULT_NAMESPACE = "/distributed-lock/";

    /** Default session lease TTL. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

    /** Default bound on each etcd request. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private final Duration leaseTtl;

    /**
     * Creates a registry with the default request timeout.
     * @param client the etcd client (not closed by this registry)
     * @param namespace prefix of every key this registry writes
     * @param leaseTtl session lease TTL, whole seconds, at least one second
     * @param ownerIdentity who this process is, stored with every entry (for example
     * {@code orders@host-1:4242})
     */
    public EtcdLockRegistry(Client client, String namespace, Duration leaseTtl, String ownerIdentity) {
        this(builder(client).namespace(namespace).leaseTtl(leaseTtl).ownerIdentity(ownerIdentity));
    }

    private EtcdLockRegistry(Builder builder) {
        super(builder.ownerIdentity, builder.localHandoff, (statistics, losses) -> new EtcdLockStore(builder.client,
                new EtcdKeyspace(builder.namespace), builder.leaseTtl, builder.requestTimeout, builder.ownerIdentity,
                builder.endpoints, statistics, losses));
        this.leaseTtl = builder.leaseTtl;
    }

    /**
     * Why {@code namespace} cannot be a registry's namespace, or {@code null} if it can: the one
     * check behind {@link Builder#namespace(String)} and the {@code distributed-lock.etcd.namespace}
     * property.
     * @param namespace a candidate namespace
     * @return a sentence fragment naming the value, such as {@code must end with '/', but was 'x'},
     * or {@code null}
     */
    public static @Nullable String namespaceProblem(@Nullable String namespace) {
        return EtcdKeyspace.namespaceProblem(namespace);
    }

    /**
     * Why {@code leaseTtl} cannot be a session lease TTL, or {@code null} if it can: etcd leases
     * have whole seconds. The one check behind {@link Builder#leaseTtl(Duration)} and the
     * {@code distributed-lock.etcd.lease-ttl} property.
     * @param leaseTtl a candidate TTL
     * @return a sentence fragment without the value, or {@code null}
     */
    public static @Nullable String leaseTtlProblem(@Nullable Duration leaseTtl) {
        if (leaseTtl == null || leaseTtl.compareTo(Duration.ofSeconds(1)) < 0 || leaseTtl.getNano() != 0) {
            return "must be a whole number of seconds, at least 1s";
        }
        return null;
    }

    /**
     * Starts building a registry on {@code client}.
     * @param client the etcd client (not closed by the registry)
     * @return a builder with the defaults
     */
    public static Builder builder(Client client) {
        return new Builder(client);
    }

    /** @return the session lease TTL as configured */
    public Duration getLeaseTtl() {
        return this.leaseTtl;
    }

    /**
     * The TTL etcd granted the current session lease: etcd grants at least its minimum TTL (which
     * follows from its election timeout, 2 s with etcd's defaults), so this may exceed
     * {@link #getLeaseTtl()}. A crashed holder's locks are freed, and holds cut off from etcd are
     * reported lost, after the granted TTL.
     * @return the granted TTL, or {@code null} before the first session
     */
    public @Nullable Duration getGrantedLeaseTtl() {
        return store().grantedTtl();
    }

    /**
     * Revokes the session lease, which deletes every entry of this registry in etcd and so
     * releases its locks; holds still open report themselves lost and waiters fail. Idempotent.
     */
    @Override
    public void close() {
        store().close();
    }

    // ---- for tests -----------------------------------------------------------------------------

    /** Threads of this registry waiting for {@code key}: at the unfair gate, or behind an older entry. */
    int queuedWaiters(String key) {
        return core().waitingThreadCount(key);
    }

    /** Whether this process holds, waits for or keeps an entry of {@code key}. */
    boolean hasStateFor(String key) {
        return core().activeKeys().contains(key);
    }

    /** The lease of the live session, or 0 if there is none. */
    long liveLeaseId() {
        return store().sessions().liveLeaseId();
    }

    /** Entries of this registry's sessions that own (or are writing, or releasing) a key. */
    int registeredEntries() {
        int count = 0;
        for (QueueEntry entry : store().sessions().entries()) {
            count++;
        }
        return count;
    }

    /** Whether some thread is granting a session lease right now. */
    boolean sessionGrantInProgress() {
        return store().sessions().grantInProgress();
    }

    /** Keep-alive calls whose gRPC stream has not ended yet. */
    int openKeepAliveCalls() {
        return store().sessions().openKeepAliveCalls();
    }

    /** Runs {@code task} on the thread that deletes entries and watches etcd. */
    void runOnMaintenanceThread(Runnable task) {
        store().runOnMaintenanceThread(task);
    }

    /** Runs {@code task} on the thread that sends keep-alives and ends the session at its deadline. */
    void runOnSessionThread(Runnable task) {
        store().runOnSessionThread(task);
    }

    /** Sweeps the session lease for ghost entries; see {@link EntryCleanup}. */
    void sweepForGhosts() {
        store().sweepForGhosts();
    }

    EtcdKeyspace keyspace() {
        return store().keyspace();
    }

    /** Builds an {@link EtcdLockRegistry}. */
    public static final class Builder {

        private final Client client;

        private String namespace = DEFAULT_NAMESPACE;

        private Duration leaseTtl = DEFAULT_LEASE_TTL;

        private String ownerIdentity = RegistrySettings.processIdentity();

        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

        private String endpoints = "the configured endpoints";

        private LocalHandoff localHandoff = LocalHandoff.DEFAULT;

        private Builder(Client client) {
            this.client = Objects.requireNonNull(client, "etcd client must not be null");
        }

        /**
         * Sets the prefix of every key the registry writes (default {@value #DEFAULT_NAMESPACE}).
         * Registries on different namespaces never share or see each other's entries, also when
         * one namespace is nested in the other.
         * @param namespace a prefix ending with {@code /}, without {@code #} (which separates the
         * namespace from lock keys)
         * @return this builder
         */
        public Builder namespace(String namespace) {
            String problem = namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("etcd namespace " + problem);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * Sets the session lease TTL (default 10 s): how long a crashed holder can block others,
         * and how long etcd may be unreachable before holds are considered lost. etcd leases
         * have whole seconds: the TTL must be a whole number of seconds, at least one.
         * @param leaseTtl the TTL
         * @return this builder
         */
        public Builder leaseTtl(Duration leaseTtl) {
            String problem = leaseTtlProblem(leaseTtl);
            if (problem != null) {
                throw new IllegalArgumentException("etcd lease TTL " + problem + ", but was " + leaseTtl);
            }
            this.leaseTtl = leaseTtl;
            return this;
        }

        /**
         * Sets the identity stored with every entry, shown in errors and tools as the holder
         * (default {@code <host>:<pid>}); the thread name is appended per entry.
         * @param ownerIdentity a non-empty identity
         * @return this builder
         */
        public Builder ownerIdentity(String ownerIdentity) {
            RegistrySettings.checkOwnerIdentity(ownerIdentity);
            this.ownerIdentity = ownerIdentity;
            return this;
        }

        /**
         * Sets the bound on each etcd request (default 5 s).
         * @param requestTimeout a positive duration
         * @return this builder
         */
        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = RegistrySettings.checkRequestTimeout(requestTimeout);
            return this;
        }

        /**
         * Names the endpoints the client connects to, for error messages only.
         * @param endpoints the endpoint URLs
         * @return this builder
         */
        public Builder endpoints(Collection<String> endpoints) {
            this.endpoints = String.valueOf(List.copyOf(endpoints));
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
        public EtcdLockRegistry build() {
            return new EtcdLockRegistry(this);
        }
    }
}
