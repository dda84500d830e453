package io.github.distlock.redis;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * One session of a registry: a key {@code <namespace>session:<id>} that expires after the lease
 * TTL unless renewed, renewed together with the liveness keys of the session's entries. The
 * session is alive while Redis cannot have expired it: until one TTL after the send of the last
 * acknowledged renewal, on this process's monotonic clock. Once lost it stays lost; the next
 * acquisition starts a new one.
 */
final class RedisSession {

    final String id;

    final String key;

    /** Entries written (or being written) under this session and not yet ended. */
    final Set<RedisEntry> entries = ConcurrentHashMap.newKeySet();

    /** When the last renewal Redis acknowledged was sent ({@link System#nanoTime()}). */
    private volatile long renewedAt;

    private final AtomicReference<@Nullable String> lostReason = new AtomicReference<>();


    RedisSession(String id, String key, long startedAt) {
        this.id = id;
        this.key = key;
        this.renewedAt = startedAt;
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
