package io.github.distlock.redis;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.distlock.store.RenewedSession;

/**
 * One session of a registry: a key {@code <namespace>session:<id>} that expires after the lease
 * TTL unless renewed, renewed together with the liveness keys of the session's entries.
 */
final class RedisSession extends RenewedSession {

    final String key;

    /** Entries written (or being written) under this session and not yet ended. */
    final Set<RedisEntry> entries = ConcurrentHashMap.newKeySet();

    RedisSession(String id, String key, long startedAt) {
        super(id, startedAt);
        this.key = key;
    }
}
