package io.github.distlock.etcd;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes queue entries that a waiter gave up or a release could not delete, retrying in the
 * background until etcd confirms or the entry's session ends (its lease then takes the key with
 * it), so a ghost entry never delays the next waiter for long.
 */
final class EntryDeleter {

    private static final Logger logger = LoggerFactory.getLogger(EntryDeleter.class);

    private static final long FIRST_RETRY_MILLIS = 100;

    private static final long MAX_RETRY_MILLIS = 2_000;

    private final ScheduledExecutorService scheduler;

    private final long requestTimeoutNanos;

    private final BackendFailures failures;

    private final Map<ByteSequence, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

    EntryDeleter(ScheduledExecutorService scheduler, long requestTimeoutNanos, BackendFailures failures) {
        this.scheduler = scheduler;
        this.requestTimeoutNanos = requestTimeoutNanos;
        this.failures = failures;
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
        attempt(entry, 1, FIRST_RETRY_MILLIS, gone);
        return gone;
    }

    /**
     * The deletion of the entry with this key, if one of this registry's entries is being deleted.
     * @return completes once it is gone, or {@code null} if no such deletion is in progress
     */
    CompletableFuture<Void> deletionOf(ByteSequence key) {
        return this.inFlight.get(key);
    }

    private void attempt(QueueEntry entry, int attempt, long nextDelayMillis, CompletableFuture<Void> gone) {
        if (entry.session().ended().isDone()) {
            // The lease takes the key with it; later entries have another lease in their keys.
            entry.sessionOver();
            gone.complete(null);
            return;
        }
        entry.compareAndDelete()
            .orTimeout(this.requestTimeoutNanos, TimeUnit.NANOSECONDS)
            .whenComplete((response, failure) -> {
                if (failure == null) {
                    // Forget the deletion before the key can be reused: a later entry under the
                    // same key must not pass for this one's leftover.
                    gone.complete(null);
                    entry.confirmedGone();
                    if (attempt > 1) {
                        logger.info("Deleted lock entry {} after {} attempts", entry.describeKey(), attempt);
                    }
                    return;
                }
                this.failures.record();
                if (attempt == 1 || attempt % 10 == 0) {
                    logger.warn("Could not delete lock entry {} (attempt {}: {}); retrying in the background",
                            entry.describeKey(), attempt, EtcdCalls.describe(failure));
                }
                try {
                    this.scheduler.schedule(() -> attempt(entry, attempt + 1,
                            Math.min(nextDelayMillis * 2, MAX_RETRY_MILLIS), gone), nextDelayMillis,
                            TimeUnit.MILLISECONDS);
                }
                catch (RuntimeException rejected) {
                    // Scheduler shut down with the registry: the lease revoke on close removes the key.
                }
            });
    }
}
