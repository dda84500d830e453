package io.github.distlock.jdbc;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;

import org.jspecify.annotations.Nullable;

/**
 * How waiting entries of one store learn that the head of their queue may have changed: from
 * PostgreSQL's {@code LISTEN/NOTIFY} ({@link JdbcNotifications}, started once the store has written
 * an entry), from a release or removal in this process where there are no notifications, and in any
 * case from polling on a bounded interval with jitter. Holds the written entries by fence, which is
 * how a notification finds its entry.
 */
final class JdbcWakeups {

    /** How long a notification for a fence no entry registered yet is kept. */
    private static final long UNCLAIMED_NOTIFICATION_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final JdbcCalls calls;

    private final @Nullable Duration configuredPollInterval;

    /** Written entries by fence, for notifications. */
    private final Map<Long, JdbcEntry> byFence = new ConcurrentHashMap<>();

    /**
     * The same entries by lock id, for what concerns every entry of a key: a notice per write
     * behind a head must not cost a pass over every entry of the store. A key's set is created and
     * dropped (when empty) inside the map's compute, so no entry is added to a dropped set.
     */
    private final Map<String, Set<JdbcEntry>> byKey = new ConcurrentHashMap<>();

    /** Fences notified before an entry of this store registered them (or of other stores): when they came. */
    private final Map<Long, Long> unclaimedNotifications = new ConcurrentHashMap<>();

    /**
     * By lock id: the newest fence notified as written behind the head of that key, and when it
     * came, for entries that register after the notification (their write committed before it).
     */
    private final Map<String, QueuedBehind> queuedBehindByKey = new ConcurrentHashMap<>();

    /** Guards the start of {@link #notifications} against {@link #close()}. */
    private final ReentrantLock listenStart = new ReentrantLock();

    private volatile @Nullable JdbcNotifications notifications;

    /** @param pollInterval the configured poll interval, or {@code null} for one that suits the database */
    JdbcWakeups(JdbcCalls calls, @Nullable Duration pollInterval) {
        this.calls = calls;
        this.configuredPollInterval = pollInterval;
    }

    /**
     * Makes a written entry reachable by notifications, tells it to read its queue now if a
     * release named it before this or notifications may have been missed, and that an entry is
     * queued behind it if a newer entry of its key was notified before this or notifications may
     * have been missed.
     */
    void register(JdbcEntry entry) {
        long fence = entry.fence();
        this.byFence.put(fence, entry);
        this.byKey.compute(entry.lockId, (lockId, entries) -> {
            Set<JdbcEntry> present = (entries != null) ? entries : ConcurrentHashMap.newKeySet();
            present.add(entry);
            return present;
        });
        if (entry.isOver()) {
            this.byFence.remove(fence);
            removeFromKey(entry);
        }
        else {
            // Written before the current LISTEN took effect, and registered after listening() told the
            // entries registered then: a release before that may have gone unheard too.
            boolean mayHaveMissed = mayHaveMissedNotifications(entry);
            // Or a release named it between its commit and now.
            if (this.unclaimedNotifications.remove(fence) != null || mayHaveMissed) {
                entry.checkNow();
            }
            QueuedBehind newest = this.queuedBehindByKey.get(entry.lockId);
            if ((newest != null && newest.fence() > fence) || mayHaveMissed) {
                // An entry was queued behind it between its commit and now, or may have been.
                entry.queuedBehind();
            }
        }
        ensureListening();
    }

    /** The entry ended: notifications no longer reach it. */
    void forget(JdbcEntry entry) {
        if (entry.isWritten()) {
            this.byFence.remove(entry.fence(), entry);
            removeFromKey(entry);
        }
    }

    private void removeFromKey(JdbcEntry entry) {
        this.byKey.computeIfPresent(entry.lockId, (lockId, entries) -> {
            entries.remove(entry);
            return entries.isEmpty() ? null : entries;
        });
    }

    /** @return the written entries of a key that have not ended, as they are when read */
    private Set<JdbcEntry> entriesOf(String lockId) {
        return this.byKey.getOrDefault(lockId, Set.of());
    }

    /** On PostgreSQL, starts listening for released locks once this store has written an entry. */
    void ensureListening() {
        JdbcTables current = this.calls.tablesOrNull();
        if (this.notifications != null || current == null || !current.dialect().hasNotifications()
                || this.calls.isClosed()) {
            return;
        }
        this.listenStart.lock();
        try {
            if (this.notifications == null && !this.calls.isClosed()) {
                JdbcNotifications started = new JdbcNotifications(this.calls.dataSource(), current.channel,
                        this::notified, this::queuedBehind, this::headWritten, this::listening, this.calls.where(),
                        this.calls.requestTimeoutNanos());
                this.notifications = started;
                started.start();
            }
        }
        finally {
            this.listenStart.unlock();
        }
    }

    /** A release named {@code fence} as the next entry of its key. */
    private void notified(long fence) {
        JdbcEntry entry = this.byFence.get(fence);
        if (entry == null) {
            // Perhaps an entry of this store whose write committed but whose writer has not
            // registered the fence yet: the writer claims the notification when it does. Both sides
            // put first and look second, so one of them sees the other.
            this.unclaimedNotifications.put(fence, System.nanoTime());
            entry = this.byFence.get(fence);
            if (entry == null || this.unclaimedNotifications.remove(fence) == null) {
                pruneOld(this.unclaimedNotifications, at -> at);
                return;
            }
        }
        entry.checkNow();
    }

    /**
     * An entry with {@code fence} was written behind the head of the key {@code lockId}: every
     * older entry of the key has one queued behind it. Recorded first and then told to the
     * entries registered, while {@link #register} registers first and then looks at the record,
     * so an entry that registers meanwhile is told by one of the two.
     */
    private void queuedBehind(String lockId, long fence) {
        long now = System.nanoTime();
        this.queuedBehindByKey.merge(lockId, new QueuedBehind(fence, now),
                (old, notified) -> (notified.fence() > old.fence()) ? notified : old);
        for (JdbcEntry entry : entriesOf(lockId)) {
            if (entry.fence() < fence) {
                entry.queuedBehind();
            }
        }
        pruneOld(this.queuedBehindByKey, QueuedBehind::at);
    }

    /**
     * An entry with {@code fence} was written as the head of the key {@code lockId}: every older
     * entry of the key was gone by then (see {@link JdbcTables#enqueueAtOnce}), so one of this
     * process that is still registered was deleted behind its back (by hand, with its session, in a
     * failover or restore), and is lost now rather than at the session's next renewal.
     */
    private void headWritten(String lockId, long fence) {
        for (JdbcEntry entry : entriesOf(lockId)) {
            if (entry.isWritten() && entry.fence() < fence) {
                entry.lose("its lock entry was gone from the database: another process's entry became the head of "
                        + "the key", false);
            }
        }
    }

    /** The newest fence notified as written behind the head of a key, and when ({@link System#nanoTime()}). */
    private record QueuedBehind(long fence, long at) {
    }

    /**
     * Notifications for entries of other processes pile up in {@code notices}: keep the last few
     * seconds' only.
     * @param cameAt when a notice came ({@link System#nanoTime()})
     */
    private static <V> void pruneOld(Map<?, V> notices, ToLongFunction<V> cameAt) {
        if (notices.size() > 64) {
            long now = System.nanoTime();
            notices.values().removeIf(notice -> now - cameAt.applyAsLong(notice) > UNCLAIMED_NOTIFICATION_NANOS);
        }
    }

    /**
     * LISTEN took effect (again): notifications may have been missed, so every waiter reads its
     * queue, and every entry written before counts as queued behind.
     */
    private void listening() {
        for (JdbcEntry entry : this.byFence.values()) {
            entry.checkNow();
            if (mayHaveMissedNotifications(entry)) {
                entry.queuedBehind();
            }
        }
    }

    /**
     * Whether a notification that an entry was queued behind {@code entry} may have gone unheard:
     * an entry queued behind commits after it, so one written after the current LISTEN took
     * effect misses none. One written while there is no LISTEN is told when the next takes effect
     * ({@link #listening}): both sides write first (the entry's registration, the time LISTEN
     * took effect) and look second, so one of them sees the other.
     */
    private boolean mayHaveMissedNotifications(JdbcEntry entry) {
        long since = listeningSince();
        return since != 0 && entry.writeSentAt() - since < 0;
    }

    /** @return when the current LISTEN took effect ({@link System#nanoTime()}), or 0 while there is none */
    private long listeningSince() {
        JdbcNotifications listener = this.notifications;
        return (listener != null) ? listener.listeningSince() : 0;
    }

    /** @return whether LISTEN is in effect: notifications sent from now on reach this store */
    boolean isListening() {
        return listeningSince() != 0;
    }

    /** Entries were removed without a notification (expired sessions a sweep deleted): every waiter reads again. */
    void wakeAll() {
        this.byFence.values().forEach(JdbcEntry::checkNow);
    }

    /**
     * Another entry of this process may be next: without notifications in effect (none on this
     * database, or LISTEN not taken or being replaced), it would only learn at its next poll.
     */
    void wakeLocalWaiters(String lockId) {
        if (isListening()) {
            return;
        }
        for (JdbcEntry waiting : entriesOf(lockId)) {
            waiting.checkNow();
        }
    }

    /** @return the poll interval: configured, or 1 s where notifications wake waiters and 50 ms elsewhere */
    long pollIntervalNanos() {
        if (this.configuredPollInterval != null) {
            return this.configuredPollInterval.toNanos();
        }
        JdbcTables current = this.calls.tablesOrNull();
        boolean notified = current != null && current.dialect().hasNotifications();
        return notified ? TimeUnit.SECONDS.toNanos(1) : TimeUnit.MILLISECONDS.toNanos(50);
    }

    /** @return the poll interval with up to a quarter of jitter either way, so waiters of many processes spread out */
    long nextPollNanos() {
        long interval = pollIntervalNanos();
        long jitter = interval / 4;
        return interval - jitter + ThreadLocalRandom.current().nextLong(2 * jitter + 1);
    }

    /**
     * Stops listening. Called once the store is marked closed: a listener started before is read
     * here (the lock orders the two), and none starts after.
     */
    void close() {
        JdbcNotifications listening;
        this.listenStart.lock();
        try {
            listening = this.notifications;
        }
        finally {
            this.listenStart.unlock();
        }
        if (listening != null) {
            listening.close();
        }
    }
}
