package io.github.distlock.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.StoreUnavailableException;

/**
 * The one reader of lock queues in etcd, for {@link io.github.distlock.FencedLock#getHolder()},
 * {@code isLocked()}, errors, the endpoint and tools: one prefix read in create revision order,
 * then (for people) one time-to-live read per distinct lease, all concurrently. Read-only, and
 * not on any acquisition's path.
 */
final class LockInspector {

    private final Client client;

    private final EtcdKeyspace keyspace;

    private final long requestTimeoutNanos;

    private final String endpoints;

    LockInspector(Client client, EtcdKeyspace keyspace, long requestTimeoutNanos, String endpoints) {
        this.client = client;
        this.keyspace = keyspace;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.endpoints = endpoints;
    }

    /**
     * Reads one lock's queue, oldest entries first.
     * @param withLeases whether to read how long each entry's lease has left (one more read per lease)
     */
    LockSnapshot describe(String lockKey, int maxEntries, boolean withLeases) {
        ByteSequence root = this.keyspace.root(lockKey);
        GetResponse response = read(root, maxEntries, "the state of lock '" + lockKey + "'");
        List<KeyValue> entries = new ArrayList<>(response.getKvs());
        return snapshot(lockKey, entries, withLeases ? leaseTimesToLive(entries) : Map.of());
    }

    NamespaceSnapshot describeAll(int maxEntries) {
        GetResponse response = read(this.keyspace.locksPrefix(), maxEntries,
                "the locks under '" + this.keyspace.namespace() + "'");
        Map<ByteSequence, List<KeyValue>> byRoot = new LinkedHashMap<>();
        for (KeyValue kv : response.getKvs()) {
            ByteSequence root = this.keyspace.rootOf(kv.getKey());
            if (root != null) {
                byRoot.computeIfAbsent(root, r -> new ArrayList<>()).add(kv);
            }
        }
        Map<Long, Duration> timesToLive = leaseTimesToLive(response.getKvs());
        List<LockSnapshot> locks = new ArrayList<>(byRoot.size());
        byRoot.forEach((root, entries) -> locks.add(snapshot(this.keyspace.lockKeyOf(root), entries, timesToLive)));
        locks.sort(Comparator.comparing(LockSnapshot::key));
        return new NamespaceSnapshot(this.keyspace.namespace(), response.getHeader().getRevision(), locks,
                response.isMore());
    }

    private GetResponse read(ByteSequence prefix, int maxEntries, String what) {
        // Oldest first: whatever the limit cuts off, every lock that is read has its holder in it.
        GetOption option = GetOption.builder()
            .isPrefix(true)
            .withSortField(GetOption.SortTarget.CREATE)
            .withSortOrder(GetOption.SortOrder.ASCEND)
            .withLimit(maxEntries)
            .build();
        try {
            return EtcdCalls.awaitUninterruptibly(this.client.getKVClient().get(prefix, option),
                    this.requestTimeoutNanos, "lock listing");
        }
        catch (StoreUnavailableException ex) {
            throw new IllegalStateException("Could not read " + what + " from etcd at " + this.endpoints + ": "
                    + ex.getMessage(), ex);
        }
    }

    private static LockSnapshot snapshot(String lockKey, List<KeyValue> entries, Map<Long, Duration> timesToLive) {
        // Entries own the lock in create revision order: the oldest holds, the others wait.
        entries.sort(Comparator.comparingLong(KeyValue::getCreateRevision));
        List<LockSnapshot.Entry> queue = new ArrayList<>(entries.size());
        for (KeyValue kv : entries) {
            EntryValue value = EntryValue.decode(EtcdKeyspace.text(kv.getValue()));
            queue.add(new LockSnapshot.Entry(value.owner(), value.thread(), kv.getCreateRevision(), value.queuedAt(),
                    Long.toHexString(kv.getLease()), timesToLive.get(kv.getLease())));
        }
        return queue.isEmpty() ? new LockSnapshot(lockKey, null, List.of())
                : new LockSnapshot(lockKey, queue.get(0), queue.subList(1, queue.size()));
    }

    /** Seconds each lease has left; a lease that etcd no longer knows is left out. */
    private Map<Long, Duration> leaseTimesToLive(List<KeyValue> entries) {
        Map<Long, CompletableFuture<LeaseTimeToLiveResponse>> calls = new HashMap<>();
        for (KeyValue kv : entries) {
            if (kv.getLease() == 0) {
                continue; // not a lock entry: written by something else
            }
            calls.computeIfAbsent(kv.getLease(),
                    lease -> this.client.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT));
        }
        Map<Long, Duration> timesToLive = new HashMap<>();
        for (Map.Entry<Long, CompletableFuture<LeaseTimeToLiveResponse>> call : calls.entrySet()) {
            try {
                long seconds = EtcdCalls.awaitUninterruptibly(call.getValue(), this.requestTimeoutNanos,
                        "lease time-to-live read").getTTL();
                if (seconds >= 0) {
                    timesToLive.put(call.getKey(), Duration.ofSeconds(seconds));
                }
            }
            catch (StoreUnavailableException ex) {
                throw new IllegalStateException("Could not read lease " + Long.toHexString(call.getKey())
                        + " from etcd at " + this.endpoints + ": " + ex.getMessage(), ex);
            }
        }
        return timesToLive;
    }
}
