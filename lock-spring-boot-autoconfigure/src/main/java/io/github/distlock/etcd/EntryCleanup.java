package io.github.distlock.etcd;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.github.distlock.store.LockKeys;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every removal of queue entries, in one place: entries whose acquisition gave up, releases etcd
 * did not confirm, lost holds, and ghosts (writes etcd applied after their acquisition had given
 * up). Deletes are retried in the background until etcd confirms or the entry's session ends (its
 * lease then takes the key with it), so no such entry delays the next waiter for long. Runs on
 * the maintenance thread and jetcd's threads; never blocks a caller.
 *
 * <p>Invariant: an entry's key is deleted only with a compare on the create revision it was
 * written at, or by key alone while its write has no answer (keys are unique per acquisition and
 * reused only after a confirmed delete), so a clean-up never removes another entry.
 */
final class EntryCleanup {

    private static final Logger logger = LoggerFactory.getLogger(EntryCleanup.class);

    private static final long GHOST_SWEEP_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final long GHOST_SWEEP_PERIOD_MILLIS = 1_000;

    private static final long FIRST_RETRY_MILLIS = 100;

    private static final long MAX_RETRY_MILLIS = 2_000;

    private final Client client;

    private final EtcdKeyspace keyspace;

    private final SessionKeeper sessions;

    private final ScheduledExecutorService scheduler;

    private final long requestTimeoutNanos;

    private final BackendFailures failures;

    private final Map<ByteSequence, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

    private final AtomicBoolean ghostSweepScheduled = new AtomicBoolean();

    private volatile long sweepGhostsUntilNanos;

    EntryCleanup(Client client, EtcdKeyspace keyspace, SessionKeeper sessions, ScheduledExecutorService scheduler,
            long requestTimeoutNanos, BackendFailures failures) {
        this.client = client;
        this.keyspace = keyspace;
        this.sessions = sessions;
        this.scheduler = scheduler;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.failures = failures;
    }

    /**
     * Removes the entry of an acquisition that gave up, without blocking. A write whose outcome is
     * unknown may still be retried by the client, or applied by etcd after our delete: it is
     * deleted now and again once the write settles, and the lease is swept for entries nobody owns.
     * @param pendingWrite the entry's write while its outcome is unknown, else {@code null}
     */
    void giveUp(QueueEntry entry, @Nullable CompletableFuture<TxnResponse> pendingWrite) {
        if (!entry.isWritten()) {
            if (pendingWrite == null) {
                // Never sent: the number was not used.
                entry.sessionOver();
                return;
            }
            sweepForGhosts();
            deleteUntilGone(entry);
            pendingWrite.whenComplete((response, failure) -> {
                if (failure == null) {
                    entry.writtenLate(QueueEntry.writtenAt(response));
                    deleteUntilGone(entry);
                }
            });
            return;
        }
        deleteUntilGone(entry);
    }

    /**
     * Deletes the entry's key, retrying in the background.
     * @return completes once etcd confirmed the delete or the entry's session ended; never
     * exceptionally
     */
    CompletableFuture<Void> deleteUntilGone(QueueEntry entry) {
        CompletableFuture<Void> gone = new CompletableFuture<>();
        // Entry keys are reused only after etcd confirmed the delete, so a key maps to one deletion.
        this.inFlight.put(entry.key(), gone);
        gone.whenComplete((done, never) -> this.inFlight.remove(entry.key(), gone));
        attempt(entry, 1, FIRST_RETRY_MILLIS, gone, System.nanoTime());
        return gone;
    }

    /**
     * The deletion of the entry with this key, if one of this registry's entries is being deleted.
     * @return completes once it is gone, or {@code null} if no such deletion is in progress
     */
    @Nullable CompletableFuture<Void> deletionOf(ByteSequence key) {
        return this.inFlight.get(key);
    }

    /** @param since when the first attempt was sent */
    private void attempt(QueueEntry entry, int attempt, long nextDelayMillis, CompletableFuture<Void> gone,
            long since) {
        if (gone.isDone()) {
            // An earlier attempt answered after its time was up.
            return;
        }
        if (entry.session().ended().isDone()) {
            // The lease takes the key with it; later entries have another lease in their keys.
            entry.sessionOver();
            gone.complete(null);
            return;
        }
        CompletableFuture<TxnResponse> call = entry.compareAndDelete();
        // Any attempt's answer confirms the delete, also one that comes after the next attempt was sent.
        call.thenAccept((response) -> {
            // Forget the deletion before the key can be reused: a later entry under the same key
            // must not pass for this one's leftover.
            if (gone.complete(null)) {
                entry.confirmedGone();
                if (attempt > 1) {
                    logger.info("Deleted lock entry {} after {} attempts", LockKeys.abbreviate(entry.describeKey()),
                            attempt);
                }
            }
        });
        call.copy()
            .orTimeout(EtcdLockStore.idempotentAttemptNanos(this.requestTimeoutNanos), TimeUnit.NANOSECONDS)
            .whenComplete((response, failure) -> {
                if (failure == null || gone.isDone()) {
                    return;
                }
                try {
                    this.scheduler.schedule(() -> {
                        if (gone.isDone()) {
                            return;
                        }
                        // An attempt merely not answered yet is no store error until a request timeout has
                        // passed without any answer: etcd may just be slower than an attempt.
                        if (!(failure instanceof TimeoutException)
                                || System.nanoTime() - since >= this.requestTimeoutNanos) {
                            this.failures.record();
                            if (attempt == 1 || attempt % 10 == 0) {
                                logger.warn("Could not delete lock entry {} (attempt {}: {}); retrying in the "
                                        + "background", LockKeys.abbreviate(entry.describeKey()), attempt,
                                        EtcdCalls.describe(failure));
                            }
                        }
                        attempt(entry, attempt + 1, Math.min(nextDelayMillis * 2, MAX_RETRY_MILLIS), gone, since);
                    }, nextDelayMillis, TimeUnit.MILLISECONDS);
                }
                catch (RuntimeException rejected) {
                    // Scheduler shut down with the registry: the lease revoke on close removes the key.
                }
            });
    }

    // ---- ghosts --------------------------------------------------------------------------------

    /**
     * Deletes entries under the session lease that no acquisition owns: writes whose answer was
     * lost and that etcd applied after the acquisition had given up and deleted its key (for
     * example a deposed leader's proposal committed by its successor). Such a ghost would block
     * the queue for as long as the session lives. Runs every second for a minute after each
     * uncertain write; one lease read per run.
     */
    void sweepForGhosts() {
        this.sweepGhostsUntilNanos = System.nanoTime() + GHOST_SWEEP_WINDOW_NANOS;
        if (this.ghostSweepScheduled.compareAndSet(false, true)) {
            scheduleGhostSweep();
        }
    }

    private void scheduleGhostSweep() {
        try {
            this.scheduler.schedule(this::sweepGhostsOnce, GHOST_SWEEP_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }
        catch (RejectedExecutionException ex) {
            // Closed: revoking the lease removed every entry.
        }
    }

    private void sweepGhostsOnce() {
        EtcdSession current = this.sessions.currentOrNull();
        CompletableFuture<?> sweep = (current != null && current.isAlive() && !this.sessions.isClosed())
                ? this.client.getLeaseClient()
                    .timeToLive(current.leaseId(), LeaseOption.builder().withAttachedKeys().build())
                    .orTimeout(this.requestTimeoutNanos, TimeUnit.NANOSECONDS)
                    .thenAccept(lease -> deleteUnowned(lease.getKeys(), current.leaseId()))
                : CompletableFuture.completedFuture(null);
        sweep.whenComplete((done, failure) -> {
            if (sweepWanted()) {
                scheduleGhostSweep();
                return;
            }
            this.ghostSweepScheduled.set(false);
            // An uncertain write may have come between the check and the reset.
            if (sweepWanted() && this.ghostSweepScheduled.compareAndSet(false, true)) {
                scheduleGhostSweep();
            }
        });
    }

    private boolean sweepWanted() {
        return !this.sessions.isClosed() && System.nanoTime() - this.sweepGhostsUntilNanos < 0;
    }

    private void deleteUnowned(List<ByteSequence> storedKeys, long leaseId) {
        Set<ByteSequence> registered = new HashSet<>();
        for (QueueEntry entry : this.sessions.entries()) {
            registered.add(entry.key());
        }
        for (ByteSequence storedKey : storedKeys) {
            ByteSequence key = this.keyspace.entryKeyIn(storedKey);
            if (key != null && !registered.contains(key)) {
                this.client.getKVClient().get(key).thenAccept(found -> {
                    for (KeyValue kv : found.getKvs()) {
                        // Read as this client names keys: still under the session lease, so ours.
                        if (kv.getLease() == leaseId) {
                            deleteIfStillUnowned(kv);
                        }
                    }
                });
            }
        }
    }

    /**
     * Entries register before they write, so an entry that owns this key and revision is
     * registered by the time the read saw it; the delete compares the revision, so it can never
     * remove a newer entry that reuses the key.
     */
    private void deleteIfStillUnowned(KeyValue kv) {
        if (isOwned(kv.getKey(), kv.getCreateRevision())) {
            return;
        }
        logger.warn("Deleting orphaned lock entry {}: its write was applied after its acquisition gave up",
                LockKeys.abbreviate(EtcdKeyspace.text(kv.getKey())));
        QueueEntry.deleteIfCreatedAt(this.client.getKVClient(), kv.getKey(), kv.getCreateRevision());
    }

    /** Whether a registered entry wrote (or is writing) {@code key} at {@code createRevision}. */
    private boolean isOwned(ByteSequence key, long createRevision) {
        for (QueueEntry entry : this.sessions.entries()) {
            if (entry.key().equals(key) && (entry.fence() == createRevision || entry.fence() < 0)) {
                return true;
            }
        }
        return false;
    }
}
