package io.github.distlock.store;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * A session a store keeps alive by renewing it (a Redis key, a database row): alive while the
 * server cannot have expired it, that is until one TTL after the send of the last renewal the
 * server acknowledged, on this process's monotonic clock (the server started its TTL after that
 * send). Once lost it stays lost; the next acquisition starts a new one.
 */
public class RenewedSession {

    /** The session's id, unique across processes. */
    public final String id;

    /** When the last renewal the server acknowledged was sent ({@link System#nanoTime()}). */
    private final AtomicLong renewedAt;

    private final AtomicReference<@Nullable String> lostReason = new AtomicReference<>();

    /**
     * @param id the session's id
     * @param startedAt when the request that started it was sent ({@link System#nanoTime()})
     */
    public RenewedSession(String id, long startedAt) {
        this.id = id;
        this.renewedAt = new AtomicLong(startedAt);
    }

    /** @return when the last acknowledged renewal was sent ({@link System#nanoTime()}) */
    public final long renewedAt() {
        return this.renewedAt.get();
    }

    /**
     * The server acknowledged a renewal; answers may arrive out of order, the latest send counts.
     * @param sentAt when it was sent ({@link System#nanoTime()})
     */
    public final void renewed(long sentAt) {
        // Renewals may complete together (a store whose renewals overlap): the latest send wins.
        this.renewedAt.accumulateAndGet(sentAt, (current, sent) -> (sent - current > 0) ? sent : current);
    }

    /** @return why the session ended, or {@code null} while it has not */
    public final @Nullable String lostReason() {
        return this.lostReason.get();
    }

    /**
     * Ends the session.
     * @param reason why
     * @return whether this call ended it (it ends once)
     */
    public final boolean lose(String reason) {
        return this.lostReason.compareAndSet(null, reason);
    }

    /**
     * @param ttlNanos the session's TTL
     * @return whether it has not ended and its deadline has not passed
     */
    public final boolean isAlive(long ttlNanos) {
        return this.lostReason.get() == null && System.nanoTime() - this.renewedAt.get() < ttlNanos;
    }
}
