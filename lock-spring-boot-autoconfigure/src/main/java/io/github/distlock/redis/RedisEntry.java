package io.github.distlock.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.redis.RedisConnection.Connected;
import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.QueuedBehindSignal;
import io.github.distlock.store.StoreCalls;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import io.lettuce.core.ScriptOutputType;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition's entry in a Redis queue: enqueued by {@link RedisScripts#ENQUEUE}, owns the key
 * when it is the oldest live entry, learns that from a handover message or from checking its place
 * ({@link RedisScripts#CHECK}) when the head it waits behind would have expired or a bounded
 * interval passed (pub/sub may drop messages), and is removed by {@link RedisScripts#REMOVE}.
 *
 * <p>Invariants: those of {@link AbstractStoreEntry}; the fence and {@link #renewedAt} are set
 * before the entry counts as written, so whoever sees the fence sees its deadline too.
 */
final class RedisEntry extends AbstractStoreEntry {

    /** After a failed check, the next one comes this soon (or at the recheck interval, if shorter). */
    private static final long FAILED_CHECK_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** A check scheduled by a head's expiry comes this long after it, so that Redis has expired the head. */
    private static final long EXPIRY_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    final RedisLockStore store;

    final RedisSession session;

    final String id;

    private final String value;

    private final RedisKeyspace.LockNames names;

    private final String entryKey;

    private volatile long fence;

    private volatile @Nullable String ahead;

    /** A handover message named this entry: it holds. */
    private boolean handedOver;

    /** When to check the entry's place again ({@link System#nanoTime()}). */
    private long checkAt;

    /**
     * Counts the checks asked for at once ({@link #messagesMayBeLost}). An answer to a call sent
     * before the last such request predates the lost messages: it must not put that check off.
     */
    private int checksRequested;

    /** When the last renewal of the entry's liveness key that Redis acknowledged was sent. */
    private volatile long renewedAt;

    /** Told once when an entry is queued behind this one; see {@link #whenQueuedBehind}. */
    private final QueuedBehindSignal queuedBehind = new QueuedBehindSignal();

    RedisEntry(RedisLockStore store, RedisSession session, String id, String key, String value) {
        super(key);
        this.store = store;
        this.session = session;
        this.id = id;
        this.value = value;
        this.names = store.keyspace().namesOf(key);
        this.entryKey = this.names.entryPrefix() + id;
    }

    @Override
    public boolean acquire(Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        Connected connection = this.store.connected(attempt);
        // Tracked before the write: a handover can be published before the write's answer arrives.
        this.store.track(this);
        if (isLost()) {
            // The session ended before the entry was written: writing it would leave it to nobody.
            end();
            throw gone();
        }
        long sentAt = System.nanoTime();
        int requestsBefore = checksRequested();
        List<Object> answer;
        CompletableFuture<List<Object>> enqueue = connection.evalList(RedisScripts.ENQUEUE,
                new String[] { this.names.queue(), this.names.counter(), this.entryKey }, this.id,
                this.store.ttlArgument(), this.value, this.names.entryPrefix(), this.store.keyspace().channel());
        try {
            answer = StoreCalls.await(enqueue.copy(), attempt.atMost(this.store.requestTimeoutNanos()),
                    "Writing the lock entry");
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            // The write may have happened, or happen later (a resend, or EVAL after NOSCRIPT): remove
            // whatever it left now, and again once it is answered.
            end();
            this.store.removeLater(this);
            // Also if it fails: a timeout or reconnect can fail the answer of a write that ran.
            enqueue.whenComplete((late, failure) -> this.store.removeLater(this));
            throw ex;
        }
        long fenceOrGone = (Long) answer.get(0);
        if (fenceOrGone < 0) {
            // Only a resent write finds its entry again; its liveness key expired in between.
            lose("its lock entry expired in Redis before it was written again", false);
            end();
            this.store.removeLater(this);
            throw gone();
        }
        this.lock.lock();
        try {
            // renewedAt first: a thread that sees the fence (isWritten) must see its deadline too.
            this.renewedAt = sentAt;
            this.fence = fenceOrGone;
        }
        finally {
            this.lock.unlock();
        }
        markWaiting();
        // Its deadline may come before the one armed now.
        this.store.scheduleDeadlineCheck();
        boolean holdsNow = (Long) answer.get(1) == 1L;
        if (!holdsNow) {
            behind(answer, 2, requestsBefore);
        }
        else if ((Long) answer.get(2) == 1L) {
            this.queuedBehind.fire();
        }
        return awaitTurn(wait, attempt, holdsNow);
    }

    /** @param attempt bounds how long a give-up waits for its removal to be confirmed */
    private boolean awaitTurn(Wait wait, Wait attempt, boolean holdsNow) throws EntryLostException, InterruptedException {
        boolean owned = false;
        try {
            if (holdsNow) {
                owned = becomeHolder();
                return owned;
            }
            while (true) {
                Turn turn = wait.block(this::awaitChange);
                switch (turn) {
                    case HOLDS -> {
                        owned = becomeHolder();
                        return owned;
                    }
                    case LOST -> throw gone();
                    case OVER -> {
                        return false;
                    }
                    case CHECK -> {
                        if (check(wait)) {
                            owned = becomeHolder();
                            return owned;
                        }
                    }
                }
            }
        }
        finally {
            if (!owned) {
                boolean wasLive = end();
                if (wasLive || isLost()) {
                    this.store.removeBeforeReturning(this, attempt);
                }
            }
        }
    }

    private enum Turn { HOLDS, LOST, OVER, CHECK }

    private Turn awaitChange(long remainingNanos) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(remainingNanos, Long.MAX_VALUE / 4);
        this.lock.lock();
        try {
            while (true) {
                if (isLost()) {
                    return Turn.LOST;
                }
                if (this.handedOver) {
                    return Turn.HOLDS;
                }
                long now = System.nanoTime();
                if (now - this.checkAt >= 0) {
                    return Turn.CHECK;
                }
                if (now - deadline >= 0) {
                    return Turn.OVER;
                }
                this.changed.awaitNanos(Math.min(this.checkAt - now, deadline - now));
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Checks the entry's place in Redis. @return whether it holds */
    private boolean check(Wait wait) throws EntryLostException, InterruptedException {
        List<Object> answer;
        int requestsBefore = checksRequested();
        try {
            Connected connection = this.store.connected(wait.atMost(this.store.requestTimeoutNanos()));
            answer = StoreCalls.await(connection.evalList(RedisScripts.CHECK,
                    new String[] { this.names.queue(), this.entryKey }, this.id, this.names.entryPrefix(),
                    this.store.keyspace().channel()), wait.atMost(this.store.requestTimeoutNanos()),
                    "Checking the lock entry");
        }
        catch (StoreUnavailableException ex) {
            // Keep the place: the entry lives while renewals succeed; if they stop, it is lost.
            this.store.failed(ex);
            scheduleCheck(System.nanoTime() + Math.min(FAILED_CHECK_PAUSE_NANOS, this.store.recheckIntervalNanos()),
                    requestsBefore);
            return false;
        }
        long place = (Long) answer.get(0);
        if (place == 0) {
            lose("its lock entry was gone from Redis while it waited (expired or deleted)", false);
            throw gone();
        }
        if (place == 1) {
            if ((Long) answer.get(1) == 1L) {
                this.queuedBehind.fire();
            }
            return true;
        }
        behind(answer, 1, requestsBefore);
        return false;
    }

    /**
     * Reads the head's value and PTTL at {@code from} of a script's answer, and when to check again.
     * @param requestsBefore {@link #checksRequested()} when the script was sent
     */
    private void behind(List<Object> answer, int from, int requestsBefore) {
        String headValue = (String) answer.get(from);
        long headTtlMillis = (Long) answer.get(from + 1);
        this.ahead = headValue.isEmpty() ? null : EntryValue.decode(headValue).describe();
        long now = System.nanoTime();
        long interval = this.store.recheckIntervalNanos();
        if (headTtlMillis >= 0) {
            interval = Math.min(interval, TimeUnit.MILLISECONDS.toNanos(headTtlMillis) + EXPIRY_MARGIN_NANOS);
        }
        scheduleCheck(now + interval, requestsBefore);
    }

    private int checksRequested() {
        this.lock.lock();
        try {
            return this.checksRequested;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Puts the next check at {@code at}, unless a check was asked for at once since {@code requestsBefore}. */
    private void scheduleCheck(long at, int requestsBefore) {
        this.lock.lock();
        try {
            if (this.checksRequested == requestsBefore) {
                this.checkAt = at;
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    private boolean becomeHolder() throws EntryLostException {
        this.lock.lock();
        try {
            if (!isLost() && System.nanoTime() - this.renewedAt >= this.store.ttlNanos()) {
                // Redis may have expired the entry: it cannot hold, whatever the last answer said.
                loseLocked(RedisLockStore.noRenewal(this.store.ttlNanos()), true);
            }
            markHoldingLocked();
            return true;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** A handover message named this entry. */
    void handedOver() {
        signal(() -> this.handedOver = true);
    }

    /** A message said an entry was queued behind this one (which holds). */
    void queuedBehind() {
        this.queuedBehind.fire();
    }

    /**
     * Messages may have been lost (the subscription reconnected): check the place now, and assume
     * an entry was queued behind.
     */
    void messagesMayBeLost() {
        signal(() -> {
            this.checkAt = System.nanoTime();
            this.checksRequested++;
        });
        this.queuedBehind.fire();
    }

    /**
     * Every entry queued behind this one is told: one queued while this entry held, by the
     * {@code +} message its write published; one queued before, by the answer or the messages that
     * made this entry the holder. Messages lost while the subscription was down count as an entry
     * queued behind ({@link #messagesMayBeLost}).
     */
    @Override
    public boolean whenQueuedBehind(Runnable queuedBehind) {
        this.queuedBehind.register(queuedBehind, false);
        return true;
    }

    /**
     * Redis acknowledged a renewal of the liveness key sent at {@code sentAt}.
     * @return whether the entry still lives here; if not, Redis just extended a key nobody will
     * renew or remove, so the caller removes it
     */
    boolean renewed(long sentAt) {
        if (sentAt - this.renewedAt > 0) {
            this.renewedAt = sentAt;
        }
        return !isEnded() && !isLost();
    }

    long renewedAt() {
        return this.renewedAt;
    }

    /** The send of the write, then of the latest renewal that found the entry in the queue with its liveness key. */
    @Override
    public long confirmedAt() {
        return this.renewedAt;
    }

    /** @return whether the entry was written, so that it has a liveness key to renew */
    boolean isWritten() {
        return this.fence != 0;
    }

    @Override
    protected void untrack() {
        this.store.untrack(this);
    }

    @Override
    protected void holdLost(String reason) {
        this.store.holdLost(this, reason);
    }

    @Override
    public boolean release() throws StoreUnavailableException {
        if (!end()) {
            // Lost meanwhile (and reported then): remove what is left.
            this.store.removeLater(this);
            return false;
        }
        Wait bound = Wait.timeout(this.store.requestTimeoutNanos(), false);
        long released;
        try {
            Connected connection = this.store.connected(bound);
            released = (Long) StoreCalls.await(connection.eval(RedisScripts.REMOVE,
                    ScriptOutputType.INTEGER, new String[] { this.names.queue(), this.entryKey }, this.id,
                    this.names.entryPrefix(), this.store.keyspace().channel(), this.store.removalMarkerArgument()), bound,
                    "Releasing the lock entry");
        }
        catch (StoreUnavailableException ex) {
            this.store.removeLater(this);
            throw ex;
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
        if (released == 1L) {
            return true;
        }
        lostAtRelease("its lock entry was already gone from Redis at release (expired or deleted)");
        return false;
    }

    @Override
    public void discard() {
        end();
        this.store.removeLater(this);
    }

    String entryKey() {
        return this.entryKey;
    }

    RedisKeyspace.LockNames names() {
        return this.names;
    }

    @Override
    public long fence() {
        return this.fence;
    }

    @Override
    public @Nullable String ahead() {
        return this.ahead;
    }

    /**
     * Also ends a written entry whose deadline passed before the maintenance thread noticed (a
     * process that resumes from a pause must not believe it still holds for a moment longer).
     */
    @Override
    public @Nullable String lostReason() {
        String lost = super.lostReason();
        if (lost == null && isWritten() && System.nanoTime() - this.renewedAt >= this.store.ttlNanos()) {
            lose(RedisLockStore.noRenewal(this.store.ttlNanos()), true);
            lost = super.lostReason();
        }
        return lost;
    }

    @Override
    protected @Nullable String sessionLostReason() {
        return this.session.lostReason();
    }
}
