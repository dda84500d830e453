package io.github.distlock.zookeeper;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
