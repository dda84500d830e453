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
import java.util.concurrent.atomic.AtomicInteger;

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
 * did not confirm, lost holds, and ghosts (write attempts etcd applied after their entry was
 * deleted or given up). Deletes are retried in the background until etcd confirms or the entry's
 * session ends (its lease then takes the key with it), so no such entry delays the next waiter
 * for long. Runs on the maintenance thread and jetcd's threads; never blocks a caller.
 *
 * <p>Invariant: an entry's key is deleted only with a compare on the create revision it was
 * written at, or by key alone while its write has no answer (keys are unique per acquisition and
 * reused only after a confirmed delete), so a clean-up never removes another entry.
 */
final class EntryCleanup {

    private static final Logger logger = LoggerFactory.getLogger(EntryCleanup.class);

    /** How long the lease is swept after an entry write attempt failed: etcd may still apply it. */
    static final long GHOST_SWEEP_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * {@link #GHOST_SWEEP_WINDOW_NANOS}, except in a test that waits past the window and
     * shortens it (for every registry of the JVM) rather than wait a minute.
     */
    static volatile long ghostSweepWindowNanos = GHOST_SWEEP_WINDOW_NANOS;

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

    /** Entry write attempts that no entry waits for any more and that have no answer yet. */
    private final AtomicInteger unansweredWrites = new AtomicInteger();

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
     * deleted now and again once the write's first answer comes (its attempts without an answer
     * are {@linkplain #followUnanswered followed} already).
     * @param pendingWrite the first answer of the entry's write while it has none, else {@code null}
     */
    void giveUp(QueueEntry entry, @Nullable CompletableFuture<TxnResponse> pendingWrite) {
        if (!entry.isWritten()) {
            if (pendingWrite == null) {
                // Never sent: the number was not used.
                entry.sessionOver();
                return;
            }
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
     * Deletes the key that an attempt of {@code entry}'s write put at {@code revision}, after the
     * entry had been written at another revision: etcd applied the attempt after the entry's key
     * was deleted, so no acquisition owns it. The compare leaves any other write of the key alone.
     */
    void deleteLateWrite(QueueEntry entry, long revision) {
        QueueEntry.deleteIfCreatedAt(this.client.getKVClient(), entry.key(), revision)
            .whenComplete((response, failure) -> {
                if (failure != null) {
                    // The sweep deletes it once no registered entry has its key.
                    sweepForGhosts();
                }
                else if (response.isSucceeded()) {
                    logger.info("Deleted lock entry {}: an earlier attempt of its write was applied after the entry "
                            + "was deleted (revision {})", LockKeys.abbreviate(entry.describeKey()), revision);
                }
            });
    }

    /**
     * Follows an attempt of an entry write that its entry does not wait for any more (it was sent
     * again, or the write ended without this attempt's answer): etcd may apply it at any time,
     * also after the entry is gone. An answer is the entry's to judge; until one comes, the
     * session lease is swept for ghosts, and for {@link #GHOST_SWEEP_WINDOW_NANOS a while} after
     * the attempt failed (a member frozen with the request may still apply it).
     */
    void followUnanswered(CompletableFuture<TxnResponse> attempt) {
        if (attempt.isDone() && !attempt.isCompletedExceptionally()) {
            return;
        }
        this.unansweredWrites.incrementAndGet();
        attempt.whenComplete((response, failure) -> {
            // Rejected for an unknown lease: nothing was written.
            if (failure != null && !EtcdCalls.isLeaseNotFound(failure)) {
                sweepForGhosts();
            }
            // After the window was set, so that the sweep goes on without a gap.
            this.unansweredWrites.decrementAndGet();
        });
        startGhostSweep();
    }

    /**
     * Deletes entries under the session lease that no acquisition owns: write attempts etcd
     * applied after their entry's key was deleted or given up (for example a frozen member's, or a
     * deposed leader's proposal committed by its successor) and whose answer never came. Such a
     * ghost would block the queue for as long as the session lives. Runs every second while an
     * entry write attempt has no answer, and for a minute after this call; one lease read per run.
     */
    void sweepForGhosts() {
        this.sweepGhostsUntilNanos = System.nanoTime() + ghostSweepWindowNanos;
        startGhostSweep();
    }

    private void startGhostSweep() {
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
            // An unanswered write may have come between the check and the reset.
            if (sweepWanted() && this.ghostSweepScheduled.compareAndSet(false, true)) {
                scheduleGhostSweep();
            }
        });
    }

    private boolean sweepWanted() {
        return !this.sessions.isClosed()
                && (this.unansweredWrites.get() > 0 || System.nanoTime() - this.sweepGhostsUntilNanos < 0);
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
        logger.warn("Deleting orphaned lock entry {}: a write of it was applied after its acquisition ended",
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
