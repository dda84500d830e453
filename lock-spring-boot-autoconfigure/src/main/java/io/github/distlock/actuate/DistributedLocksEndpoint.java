package io.github.distlock.actuate;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.health.StoreConnectivity;
import io.github.distlock.health.StoreConnectivity.Connection;
import io.github.distlock.health.StoreConnectivity.State;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.Assert;

/**
 * {@code /actuator/distributedlocks}: who holds each lock of the namespace and who is queued
 * behind, in every process that shares the namespace, read from the lock store on each request.
 * {@code /actuator/distributedlocks/{key}} shows one key; a key may contain {@code /}.
 *
 * <p>Answers within a short bound also while the store is down: without a live session it waits at
 * most the bound for a background connect attempt (shared by concurrent requests, and not at all
 * once an attempt failed), and a read waits at most the bound too. When the store cannot answer, the
 * operations throw {@link LockStoreUnavailableException}; over HTTP,
 * {@link DistributedLocksEndpointWebExtension} turns that into a 503.
 *
 * <p>Read-only, but it shows lock keys (often business identifiers) and owner identities (host
 * names): off by default like other sensitive endpoints. Switch it on with
 * {@code management.endpoint.distributedlocks.access=read-only} and expose it with
 * {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "distributedlocks", defaultAccess = Access.NONE)
public class DistributedLocksEndpoint {

    /** Most queue entries one request reads from the store; the answer says when there were more. */
    public static final int MAX_ENTRIES = 1_000;

    /** Default bound on each wait of a request: for a connect attempt, then for the read. */
    public static final Duration DEFAULT_WAIT_BOUND = Duration.ofSeconds(1);

    private static final String ALL_LOCKS = "all";

    private final InspectableLockRegistry registry;

    private final StoreConnectivity connectivity;

    private final Duration waitBound;

    /** Reads in flight, shared by requests for the same thing, so an outage does not pile them up. */
    private final ConcurrentMap<String, CompletableFuture<?>> reads = new ConcurrentHashMap<>();

    /**
     * Creates the endpoint with the {@link #DEFAULT_WAIT_BOUND default wait bound}.
     * @param registry the registry whose namespace is shown
     */
    public DistributedLocksEndpoint(InspectableLockRegistry registry) {
        this(registry, DEFAULT_WAIT_BOUND);
    }

    /**
     * Creates the endpoint.
     * @param registry the registry whose namespace is shown
     * @param waitBound how long a request waits for a connect attempt, and then for its read
     */
    public DistributedLocksEndpoint(InspectableLockRegistry registry, Duration waitBound) {
        Assert.notNull(registry, "registry must not be null");
        Assert.isTrue(waitBound != null && waitBound.compareTo(Duration.ZERO) > 0, "waitBound must be positive");
        this.registry = registry;
        this.connectivity = new StoreConnectivity(registry);
        this.waitBound = waitBound;
    }

    /**
     * Every lock of the namespace that has a holder or a waiter.
     * @return the locks, ordered by key
     * @throws LockStoreUnavailableException if the store cannot be read within the bound
     */
    @ReadOperation
    public LocksDescriptor locks() {
        NamespaceSnapshot snapshot = read(ALL_LOCKS, () -> this.registry.describeLocks(MAX_ENTRIES));
        return new LocksDescriptor(snapshot.namespace(), snapshot.revision(), snapshot.truncated(),
                snapshot.locks().stream().map(LockDescriptor::of).toList());
    }

    /**
     * One lock, held or not.
     * @param key the lock key, split at {@code /} by the request path
     * @return its holder and waiters
     * @throws LockStoreUnavailableException if the store cannot be read within the bound
     */
    @ReadOperation
    public LockDescriptor lock(@Selector(match = Match.ALL_REMAINING) String[] key) {
        String lockKey = String.join("/", key);
        return LockDescriptor.of(read("lock:" + lockKey, () -> this.registry.describeLock(lockKey, MAX_ENTRIES)));
    }

    private <T> T read(String what, Supplier<T> read) {
        try {
            Connection connection = this.connectivity.await(this.waitBound);
            if (connection.state() != State.CONNECTED) {
                // Every state but CONNECTED comes with a reason.
                throw new LockStoreUnavailableException(Objects.requireNonNull(connection.reason()));
            }
            CompletableFuture<?> inFlight = this.reads.compute(what,
                    (key, running) -> (running != null && !running.isDone()) ? running
                            : CompletableFuture.supplyAsync(read, DistributedLocksEndpoint::startReader));
            inFlight.whenComplete((result, failure) -> this.reads.remove(what, inFlight));
            @SuppressWarnings("unchecked")
            T result = (T) inFlight.get(this.waitBound.toNanos(), TimeUnit.NANOSECONDS);
            return result;
        }
        catch (TimeoutException ex) {
            // The read goes on until the registry's request timeout; a later request may join it.
            throw new LockStoreUnavailableException("the lock store did not answer within " + print(this.waitBound));
        }
        catch (ExecutionException ex) {
            Throwable failure = ex.getCause();
            if (failure instanceof IllegalStateException) {
                throw new LockStoreUnavailableException(StoreConnectivity.describe(failure));
            }
            if (failure instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(failure);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new LockStoreUnavailableException("interrupted while waiting for the lock store");
        }
    }

    private static String print(Duration duration) {
        boolean wholeSeconds = duration.toMillis() % 1000 == 0;
        return DurationStyle.SIMPLE.print(duration, wholeSeconds ? ChronoUnit.SECONDS : ChronoUnit.MILLIS);
    }

    /**
     * A thread per read: reads are rare, and one that the store leaves hanging must not hold up a pool
     * or the caller; the registry's request timeout ends it.
     */
    private static void startReader(Runnable read) {
        Thread reader = new Thread(read, "distributedlocks-read");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * The lock store cannot be read right now: it is unreachable or did not answer in time.
     */
    public static class LockStoreUnavailableException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        private final String reason;

        /**
         * Creates an exception.
         * @param reason why the store cannot be read, without endpoints or credentials
         */
        public LockStoreUnavailableException(String reason) {
            super("lock store unavailable: " + reason);
            this.reason = reason;
        }

        /** @return why the store cannot be read, without endpoints or credentials */
        public String getReason() {
            return this.reason;
        }
    }

    /**
     * The locks of a namespace.
     * @param namespace the namespace read
     * @param revision the store revision of the read (for etcd: the etcd revision), 0 if none
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
     * @param fence the fence of its hold (for etcd: its create revision)
     * @param queuedAt when it asked for the lock (ISO-8601, the writer's clock), if recorded; a
     * holder holds since then or since its predecessor released
     * @param leaseId the session (lease) it is attached to (for etcd: the lease id in hex)
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
