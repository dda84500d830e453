package io.github.distlock.zookeeper;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * One ZooKeeper session of the registry's Curator client, and the entries created in it: they are
 * ephemeral, so they end with it. Once lost it stays lost; the next acquisition uses the client's
 * next session.
 */
final class ZookeeperSession {

    final long id;

    /** The session timeout the server granted, in milliseconds. */
    final long timeoutMillis;

    final Set<ZookeeperEntry> entries = ConcurrentHashMap.newKeySet();

    private final AtomicReference<@Nullable String> lostReason = new AtomicReference<>();

    ZookeeperSession(long id, long timeoutMillis) {
        this.id = id;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * How long after sending the last sync the ensemble answered the session counts as alive here:
     * half its timeout, which is safe for sessions of three server ticks or more. Two bounds:
     * <ul>
     * <li>A sync's answer comes through the leader, so the link from this client's server to the
     * leader was up after it was sent; but the leader extends sessions only from the touches that
     * server forwards in its answers to the leader's pings (every half tick), so it may have last
     * heard of this session half a tick plus the gap between two of the client's packets before
     * the sync (the ZooKeeper client sends one at least every third of the timeout): with a tick
     * of at most a third of the timeout, half of it.</li>
     * <li>A leader cut off from its followers answers its own clients' syncs until it steps down,
     * syncLimit + 1 ticks after the cut, while the others may elect a leader, which gives every
     * session a fresh timeout, from syncLimit - 1/2 ticks after it: one and a half ticks, half
     * the timeout at three ticks.</li>
     * </ul>
     */
    long contactBudgetNanos() {
        return TimeUnit.MILLISECONDS.toNanos(this.timeoutMillis) / 2;
    }

    /** How often the session's contact is proven: three syncs may go unanswered within the budget. */
    long pingIntervalNanos() {
        return TimeUnit.MILLISECONDS.toNanos(this.timeoutMillis) / 8;
    }

    @Nullable String lostReason() {
        return this.lostReason.get();
    }

    /** @return whether this call ended the session (it ends once) */
    boolean lose(String reason) {
        return this.lostReason.compareAndSet(null, reason);
    }

    String describe() {
        return "0x" + Long.toHexString(this.id);
    }
}
