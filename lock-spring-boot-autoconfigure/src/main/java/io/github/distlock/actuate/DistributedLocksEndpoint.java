package io.github.distlock.actuate;

import java.util.List;

import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.etcd.LockSnapshot;
import io.github.distlock.etcd.NamespaceSnapshot;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.util.Assert;

/**
 * {@code /actuator/distributedlocks}: who holds each lock of the namespace and who is queued
 * behind, in every process that shares the etcd namespace, read from etcd on each request.
 * {@code /actuator/distributedlocks/{key}} shows one key; a key may contain {@code /}.
 *
 * <p>Read-only, but it shows lock keys (often business identifiers) and owner identities (host
 * names): off by default like other sensitive endpoints. Switch it on with
 * {@code management.endpoint.distributedlocks.access=read-only} and expose it with
 * {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "distributedlocks", defaultAccess = Access.NONE)
public class DistributedLocksEndpoint {

    /** Most queue entries one request reads from etcd; the answer says when there were more. */
    public static final int MAX_ENTRIES = 1_000;

    private final EtcdLockRegistry registry;

    /**
     * Creates the endpoint.
     * @param registry the registry whose namespace is shown
     */
    public DistributedLocksEndpoint(EtcdLockRegistry registry) {
        Assert.notNull(registry, "registry must not be null");
        this.registry = registry;
    }

    /**
     * Every lock of the namespace that has a holder or a waiter.
     * @return the locks, ordered by key
     */
    @ReadOperation
    public LocksDescriptor locks() {
        NamespaceSnapshot snapshot = this.registry.describeLocks(MAX_ENTRIES);
        return new LocksDescriptor(snapshot.namespace(), snapshot.revision(), snapshot.truncated(),
                snapshot.locks().stream().map(LockDescriptor::of).toList());
    }

    /**
     * One lock, held or not.
     * @param key the lock key, split at {@code /} by the request path
     * @return its holder and waiters
     */
    @ReadOperation
    public LockDescriptor lock(@Selector(match = Match.ALL_REMAINING) String[] key) {
        return LockDescriptor.of(this.registry.describeLock(String.join("/", key), MAX_ENTRIES));
    }

    /**
     * The locks of a namespace.
     * @param namespace the etcd namespace read
     * @param revision the etcd revision of the read
     * @param truncated whether more than {@value #MAX_ENTRIES} entries existed, so some are missing
     * @param locks the locks with a holder or waiters, ordered by key
     */
    public record LocksDescriptor(String namespace, long revision, boolean truncated,
            List<LockDescriptor> locks) implements OperationResponseBody {
    }

    /**
     * One lock.
     * @param key the lock key
     * @param holder the entry that holds the lock, or {@code null} (left out of the JSON) if it
     * is free
     * @param waiters the entries queued behind it, in the order they will be served
     */
    public record LockDescriptor(String key, @Nullable EntryDescriptor holder,
            List<EntryDescriptor> waiters) implements OperationResponseBody {

        static LockDescriptor of(LockSnapshot lock) {
            EntryDescriptor holder = (lock.holder() != null) ? EntryDescriptor.of(lock.holder()) : null;
            return new LockDescriptor(lock.key(), holder, lock.waiters().stream().map(EntryDescriptor::of).toList());
        }
    }

    /**
     * One queue entry of a lock.
     * @param owner owner identity of the process that wrote it
     * @param thread the thread that asked for the lock, if recorded
     * @param fence the fence of its hold (its etcd create revision)
     * @param queuedAt when it asked for the lock (ISO-8601, the writer's clock), if recorded; a
     * holder holds since then or since its predecessor released
     * @param leaseId the etcd lease it is attached to, in hex
     * @param leaseTimeToLiveSeconds seconds until its lease expires without a keep-alive, or
     * {@code null} if the lease just expired
     */
    public record EntryDescriptor(String owner, @Nullable String thread, long fence, @Nullable String queuedAt,
            String leaseId, @Nullable Long leaseTimeToLiveSeconds) {

        static EntryDescriptor of(LockSnapshot.Entry entry) {
            return new EntryDescriptor(entry.owner(), entry.thread(), entry.fence(),
                    (entry.queuedAt() != null) ? entry.queuedAt().toString() : null, entry.leaseId(),
                    (entry.leaseTimeToLive() != null) ? entry.leaseTimeToLive().toSeconds() : null);
        }
    }
}
