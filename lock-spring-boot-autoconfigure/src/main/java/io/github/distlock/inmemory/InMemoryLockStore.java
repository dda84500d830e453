package io.github.distlock.inmemory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.QueuedBehindSignal;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * The {@link LockStore} of {@link io.github.distlock.InMemoryLockRegistry}: a first-in first-out queue of entries per
 * key, in this JVM. The session never ends and no call fails, so holds are never lost.
 *
 * <p>Invariant: a key's queue is mapped exactly while it has entries, and is changed only inside
 * compute calls on the map, which serialise per key. An entry is queued and gets its fence in
 * one such call, from one counter, so fences increase in queue order per key (and keep increasing
 * after a queue is removed). The head of a queue owns the key; removing the head hands the turn to
 * the next entry alone, so a release wakes one waiter.
 */
public final class InMemoryLockStore implements LockStore {

    /** How in-memory holds name their owner: every hold is of this JVM. */
    public static final String OWNER = "in-memory";

    /** What the in-memory store calls its namespace: its locks are this registry's alone. */
    static final String NAMESPACE = "in-memory";

    /** No call of this store can fail, so an untimed acquisition never gives up on it. */
    private static final long REQUEST_TIMEOUT_NANOS = TimeUnit.DAYS.toNanos(1);

    private final Map<String, Deque<MemoryEntry>> queues = new ConcurrentHashMap<>();

    private final AtomicLong fences = new AtomicLong();

    /** Creates an empty store whose entries name {@link #OWNER} as their owner. */
    public InMemoryLockStore() {
    }

    @Override
    public StoreEntry newEntry(String key, Wait attempt) {
        return new MemoryEntry(key, Thread.currentThread().getName());
    }

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        Deque<MemoryEntry> queue = this.queues.get(key);
        List<LockSnapshot.Entry> entries = new ArrayList<>();
        if (queue != null) {
            for (MemoryEntry entry : queue) {
                if (entries.size() == maxEntries) {
                    break;
                }
                entries.add(entry.describe());
            }
        }
        return entries.isEmpty() ? new LockSnapshot(key, null, List.of())
                : new LockSnapshot(key, entries.get(0), entries.subList(1, entries.size()));
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        List<LockSnapshot> locks = new ArrayList<>();
        int left = maxEntries;
        boolean truncated = false;
        for (Map.Entry<String, Deque<MemoryEntry>> queue : new TreeMap<>(this.queues).entrySet()) {
            int queued = queue.getValue().size();
            truncated |= queued > left;
            if (left > 0 && queued > 0) {
                LockSnapshot lock = read(queue.getKey(), left, false);
                if (lock.holder() != null) {
                    locks.add(lock);
                    left -= 1 + lock.waiters().size();
                }
            }
        }
        return new NamespaceSnapshot(NAMESPACE, 0, locks, truncated);
    }

    @Override
    public CompletableFuture<Void> connect() {
        return CompletableFuture.completedFuture(null);
    }

    /** @return the key's size as a Java string (UTF-16): the key is kept as it is */
    @Override
    public long keySize(String key) {
        return 2L * key.length();
    }

    /** @return no limit: a key is a map key, and any string the JVM holds is one */
    @Override
    public long maxKeySize() {
        return Long.MAX_VALUE;
    }

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    /** @return the keys that have entries, a read-only view */
    public Set<String> keys() {
        return Collections.unmodifiableSet(this.queues.keySet());
    }

    @Override
    public long requestTimeoutNanos() {
        return REQUEST_TIMEOUT_NANOS;
    }

    @Override
    public boolean isSessionAlive() {
        return true;
    }

    @Override
    public Duration sessionRenewalAge() {
        return Duration.ZERO;
    }

    @Override
    public String describe() {
        return "the in-memory lock store";
    }

    @Override
    public void checkOpen() {
    }

    @Override
    public boolean isClosed() {
        return false;
    }

    /** Nothing to end: the store lives as long as its registry, which has no {@code close()}. */
    @Override
    public void close() {
    }

    private final class MemoryEntry implements StoreEntry {

        private final String key;

        private final String thread;

        private final Instant queuedAt = Instant.now();

        /** Completes when the entry is the head of its queue. */
        private final CompletableFuture<Void> turn = new CompletableFuture<>();

        // Written once, before the entry is added to its queue, where other threads read it.
        private volatile long fence;

        private volatile @Nullable String ahead;

        private volatile boolean waiting;

        private volatile boolean holding;

        /** Told once when an entry is queued behind this one; see {@link #whenQueuedBehind}. */
        private final QueuedBehindSignal queuedBehind = new QueuedBehindSignal();

        MemoryEntry(String key, String thread) {
            this.key = key;
            this.thread = thread;
        }

        @Override
        public String lockKey() {
            return this.key;
        }

        /** How errors and {@code getHolder()} name the entry's writer: {@code owner/thread}, as for every store. */
        String name() {
            return LockSnapshot.Entry.describe(OWNER, this.thread);
        }

        /** The fence is drawn before the entry is queued, so an entry seen in a queue has its own. */
        LockSnapshot.Entry describe() {
            return new LockSnapshot.Entry(OWNER, this.thread, this.fence, this.queuedAt,
                    NAMESPACE, null);
        }

        @Override
        public boolean acquire(Wait wait, Wait attempt) throws InterruptedException {
            InMemoryLockStore.this.queues.compute(this.key, (k, queue) -> {
                Deque<MemoryEntry> joined = (queue != null) ? queue : new ConcurrentLinkedDeque<>();
                // Drawn before the entry is published: readers walk the queue without the compute.
                this.fence = InMemoryLockStore.this.fences.incrementAndGet();
                joined.addLast(this);
                MemoryEntry head = joined.peekFirst();
                if (head == this) {
                    this.turn.complete(null);
                }
                else {
                    this.ahead = head.name();
                    head.queuedBehind.fire();
                }
                return joined;
            });
            boolean owned = false;
            try {
                this.waiting = !this.turn.isDone();
                owned = wait.block(remaining -> {
                    try {
                        this.turn.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
                        return true;
                    }
                    catch (TimeoutException ex) {
                        return false;
                    }
                    catch (ExecutionException ex) {
                        throw new IllegalStateException("turn is never completed exceptionally", ex);
                    }
                });
                this.holding = owned;
                return owned;
            }
            finally {
                this.waiting = false;
                if (!owned) {
                    Deque<MemoryEntry> queue = InMemoryLockStore.this.queues.get(this.key);
                    MemoryEntry head = (queue != null) ? queue.peekFirst() : null;
                    this.ahead = (head != null && head != this) ? head.name() : null;
                    remove();
                }
            }
        }

        private void remove() {
            InMemoryLockStore.this.queues.computeIfPresent(this.key, (k, queue) -> {
                boolean wasHead = queue.peekFirst() == this;
                queue.remove(this);
                MemoryEntry next = queue.peekFirst();
                if (wasHead && next != null) {
                    next.turn.complete(null);
                }
                return (next != null) ? queue : null;
            });
        }

        @Override
        public boolean release() {
            this.holding = false;
            remove();
            return true;
        }

        @Override
        public void discard() {
            release();
        }

        /** Entries queued before the registration are in the queue behind this one; later ones fire the signal. */
        @Override
        public boolean whenQueuedBehind(Runnable queuedBehind) {
            Deque<MemoryEntry> queue = InMemoryLockStore.this.queues.get(this.key);
            this.queuedBehind.register(queuedBehind, queue != null && queue.peekLast() != this);
            return true;
        }

        @Override
        public long fence() {
            return this.fence;
        }

        @Override
        public @Nullable String ahead() {
            return this.ahead;
        }

        @Override
        public @Nullable String lostReason() {
            return null;
        }

        @Override
        public boolean isWaiting() {
            return this.waiting;
        }

        @Override
        public boolean isHolding() {
            return this.holding;
        }
    }
}
