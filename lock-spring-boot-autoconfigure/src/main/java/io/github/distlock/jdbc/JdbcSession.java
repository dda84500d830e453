package io.github.distlock.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.distlock.store.RenewedSession;

/**
 * One session of a registry: a row of the session table whose expiry the database's clock sets
 * one TTL ahead at each renewal (after the renewal's send, so the deadline this process keeps
 * comes no later than the database's).
 */
final class JdbcSession extends RenewedSession {

    /** Entries written (or being written) under this session and not yet ended. */
    final Set<JdbcEntry> entries = ConcurrentHashMap.newKeySet();

    /**
     * Numbers of entries whose rows may exist and that this process still answers for: from the
     * entry's creation until its release or removal was answered. A row of the session whose
     * number is not here is a ghost.
     */
    final Set<Long> unsettled = ConcurrentHashMap.newKeySet();

    /** Numbers the session's entries, so that an entry whose write had no answer can still be found. */
    private final AtomicLong entryNumbers = new AtomicLong();

    JdbcSession(String id, long startedAt) {
        super(id, startedAt);
    }

    long nextEntryNumber() {
        long number = this.entryNumbers.incrementAndGet();
        this.unsettled.add(number);
        return number;
    }
}
