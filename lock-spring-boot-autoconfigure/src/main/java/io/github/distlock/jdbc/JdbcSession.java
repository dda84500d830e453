package io.github.distlock.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * One session of a registry: a row of the session table whose expiry the database's clock sets
 * one TTL ahead at each renewal. The session is alive while the database cannot have expired it:
 * until one TTL after the send of the last acknowledged renewal, on this process's monotonic clock
 * (the database computed the expiry after that send). Once lost it stays lost; the next
 * acquisition starts a new one.
 */
final class JdbcSession {

    final String id;

    /** Entries written (or being written) under this session and not yet ended. */
    final Set<JdbcEntry> entries = ConcurrentHashMap.newKeySet();

    /** Numbers the session's entries, so that an entry whose write had no answer can still be found. */
    private final AtomicLong entryNumbers = new AtomicLong();

    /** When the last renewal the database acknowledged was sent ({@link System#nanoTime()}). */
    private volatile long renewedAt;

    private final AtomicReference<@Nullable String> lostReason = new AtomicReference<>();

    JdbcSession(String id, long startedAt) {
        this.id = id;
        this.renewedAt = startedAt;
    }

    long nextEntryNumber() {
        return this.entryNumbers.incrementAndGet();
    }

    long renewedAt() {
        return this.renewedAt;
    }

    void renewed(long sentAt) {
        if (sentAt - this.renewedAt > 0) {
            this.renewedAt = sentAt;
        }
    }

    @Nullable String lostReason() {
        return this.lostReason.get();
    }

    /** @return whether this call ended the session (it ends once) */
    boolean lose(String reason) {
        return this.lostReason.compareAndSet(null, reason);
    }

    boolean isAlive(long ttlNanos) {
        return this.lostReason.get() == null && System.nanoTime() - this.renewedAt < ttlNanos;
    }
}
