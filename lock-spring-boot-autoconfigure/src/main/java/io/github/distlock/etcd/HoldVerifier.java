package io.github.distlock.etcd;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Checks in the background that a held entry's key still exists, after watch events may have been
 * missed (a stream error, a reopened stream): a deletion in such a gap would otherwise leave the
 * holder believing it holds. Retried until etcd answers, while the hold lasts: if etcd stays away,
 * the session's TTL ends the hold instead.
 *
 * <p>Invariant: {@link #wanted} counts requests not yet covered by a read that started after
 * them. Only the request that finds it at zero starts a read, and a read that ends with requests
 * left starts the next, so a burst of resyncs (every stream error of an outage) runs one chain of
 * reads per entry, never one each.
 */
final class HoldVerifier {

    private final QueueEntry entry;

    private final EtcdLockStore store;

    private final AtomicInteger wanted = new AtomicInteger();

    HoldVerifier(QueueEntry entry, EtcdLockStore store) {
        this.entry = entry;
        this.store = store;
    }

    /** Asks for a verification; starts one unless one is running. */
    void request() {
        if (this.wanted.getAndIncrement() == 0) {
            verify(1);
        }
    }

    private void verify(int attempt) {
        if (!this.entry.isHolding() || this.entry.lostReason() != null) {
            // The hold is over: nothing left to verify, now or for later requests.
            return;
        }
        // Requests up to now are answered by this read; later ones need a read of their own.
        int covered = this.wanted.get();
        this.store.kv().txn()
            .If(this.entry.stillWritten())
            .commit()
            .orTimeout(this.store.requestTimeoutNanos(), TimeUnit.NANOSECONDS)
            .whenComplete((response, failure) -> {
                if (failure == null) {
                    if (!response.isSucceeded() && this.entry.isHolding()) {
                        this.entry.markLost(QueueEntry.ENTRY_DELETED);
                    }
                    if (this.wanted.addAndGet(-covered) > 0) {
                        verify(1);
                    }
                    return;
                }
                this.store.failed();
                this.store.schedule(() -> verify(attempt + 1),
                        Math.min(EtcdCalls.RETRY_PAUSE_NANOS * attempt, this.store.requestTimeoutNanos()));
            });
    }
}
