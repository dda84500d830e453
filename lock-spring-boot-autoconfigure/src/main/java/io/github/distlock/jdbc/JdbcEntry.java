package io.github.distlock.jdbc;

import java.util.concurrent.TimeUnit;

import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.QueuedBehindSignal;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition's row in the entry table: written in a transaction that holds its key's row lock
 * (so fences commit in order), owns the key when it is the oldest entry of the key, learns that from
 * a notification ({@code LISTEN/NOTIFY} on PostgreSQL, a release in this process) or by reading the
 * head of the queue again when the head's session would expire or the poll interval (with jitter)
 * passed, and is deleted with a compare on its fence and session.
 *
 * <p>Invariants, besides those of {@link AbstractStoreEntry}: an entry behind a head whose session
 * the database's clock says has expired deletes that session (only if it is still expired, so a
 * renewal racing with it wins or loses atomically) before it reads again, so a dead process never
 * holds a queue for longer than its session TTL; an entry never holds once its session's deadline
 * on this process's clock passed.
 */
final class JdbcEntry extends AbstractStoreEntry {

    /** After a failed read, the next one comes this soon (or at the poll interval, if shorter). */
    private static final long FAILED_CHECK_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** A check scheduled by a head's expiry comes this long after it, for clocks that tick coarsely. */
    private static final long EXPIRY_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    final JdbcLockStore store;

    final JdbcSession session;

    final long number;

    final String lockId;

    final String value;

    private volatile long fence;

    private volatile @Nullable String ahead;

    /** When the write committed ({@link System#nanoTime()}), once it did. */
    private volatile long writtenAt;

    /** When the write was sent ({@link System#nanoTime()}): it commits after this. */
    private volatile long writeSentAt;

    /** The send of the write, then of the latest renewal whose read found the entry's row. */
    private volatile long confirmedAt;

    /** When to read the head of the queue again; guarded by the lock. */
    private long checkAt;

    /**
     * Told to read the head now (a notification, a local release); guarded by the lock. Kept apart
     * from {@link #checkAt}, which the answer of a read in flight would overwrite.
     */
    private boolean checkRequested;

    /** Told once when an entry is queued behind this one; see {@link #whenQueuedBehind}. */
    private final QueuedBehindSignal queuedBehind = new QueuedBehindSignal();

    JdbcEntry(JdbcLockStore store, JdbcSession session, String key, String value) {
        super(key);
        this.store = store;
        this.session = session;
        this.number = session.nextEntryNumber();
        this.lockId = JdbcTables.lockId(key);
        this.value = value;
    }

    @Override
    public boolean acquire(Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        // Its removal runs on another connection: this write could come first and queue behind it.
        this.store.awaitGivenUp(this.lockId, attempt);
        this.store.track(this);
        if (isLost()) {
            // The session ended before the entry was written: writing it would leave it to nobody.
            end();
            throw gone();
        }
        JdbcLockStore.Head head;
        this.writeSentAt = System.nanoTime();
        this.confirmedAt = this.writeSentAt;
        try {
            head = this.store.enqueue(this, attempt);
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            // Its write may have committed, or commit later: it is removed by its number.
            end();
            this.store.removeLater(this);
            throw ex;
        }
        catch (EntryLostException ex) {
            end();
            throw ex;
        }
        markWaiting();
        return awaitTurn(wait, attempt, head);
    }

    /** The write committed with {@code fence}. */
    void written(long fence) {
        // writtenAt first: the renewal takes an entry whose fence it sees (isWritten) for one with its
        // commit time set, and a time of 0 would count as a commit before any read, so a waiter written
        // just after the read was sent could be dropped as deleted.
        this.writtenAt = System.nanoTime();
        this.fence = fence;
    }

    private boolean awaitTurn(Wait wait, Wait attempt, JdbcLockStore.Head head)
            throws EntryLostException, InterruptedException {
        boolean owned = false;
        try {
            if (place(head)) {
                owned = becomeHolder();
                return owned;
            }
            while (true) {
                Turn turn = wait.block(this::awaitChange);
                switch (turn) {
                    case LOST -> throw gone();
                    case OVER -> {
                        return false;
                    }
                    case CHECK -> {
                        // A check due when the wait is over (a try-once behind an expired head, say) is
                        // made within the attempt, which has time for its round trips.
                        if (check(wait.isOver() ? attempt : wait)) {
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

    private enum Turn { LOST, OVER, CHECK }

    private Turn awaitChange(long remainingNanos) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(remainingNanos, Long.MAX_VALUE / 4);
        this.lock.lock();
        try {
            while (true) {
                if (isLost()) {
                    return Turn.LOST;
                }
                long now = System.nanoTime();
                if (this.checkRequested || now - this.checkAt >= 0) {
                    this.checkRequested = false;
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

    /** Reads the head of the queue, within {@code wait}. @return whether this entry holds */
    private boolean check(Wait wait) throws EntryLostException, InterruptedException {
        try {
            JdbcLockStore.Head head = this.store.head(this, wait.atMost(this.store.requestTimeoutNanos()));
            if (head != null && head.fence() != this.fence && head.leftMillis() <= 0) {
                // Its session expired by the database's clock: end it, unless a renewal got there first.
                this.store.deleteExpiredSession(head.sessionId(), wait.atMost(this.store.requestTimeoutNanos()));
                head = this.store.head(this, wait.atMost(this.store.requestTimeoutNanos()));
            }
            if (head == null) {
                lose("its lock entry was gone from the database while it waited (its session expired or the row "
                        + "was deleted)", false);
                throw gone();
            }
            return place(head);
        }
        catch (StoreUnavailableException ex) {
            // Keep the place: the entry lives while renewals succeed; if they stop, it is lost.
            this.store.failed(ex);
            scheduleCheck(System.nanoTime() + Math.min(FAILED_CHECK_PAUSE_NANOS, this.store.pollIntervalNanos()));
            return false;
        }
    }

    /**
     * @param head the oldest entry of the key up to this one
     * @return whether this entry is the head; if not, when to check again is scheduled
     * @throws EntryLostException if this entry is the head but its session has expired by the
     * database's clock, which every other process goes by
     */
    private boolean place(JdbcLockStore.Head head) throws EntryLostException {
        if (head.fence() == this.fence) {
            // Invariant: an entry owns its key only while the database counts its session live. The
            // local deadline cannot tell once the database's clock has stepped ahead of the last
            // renewal: any process may then end the session and take the key at once.
            if (head.leftMillis() <= 0) {
                throw this.store.sessionExpiredInTheDatabase(this.session);
            }
            return true;
        }
        this.ahead = EntryValue.decode(head.value()).describe();
        long interval = this.store.nextPollNanos();
        if (head.leftMillis() <= 0) {
            interval = 0;
        }
        else {
            interval = Math.min(interval, TimeUnit.MILLISECONDS.toNanos(head.leftMillis()) + EXPIRY_MARGIN_NANOS);
        }
        scheduleCheck(System.nanoTime() + interval);
        return false;
    }

    private void scheduleCheck(long at) {
        this.lock.lock();
        try {
            this.checkAt = at;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** The head of the queue may have changed: read it now. */
    void checkNow() {
        signal(() -> this.checkRequested = true);
    }

    /** A notification said an entry was queued behind this one, or notifications may have been missed. */
    void queuedBehind() {
        this.queuedBehind.fire();
    }

    /**
     * On PostgreSQL only: an entry written behind the head notifies every older entry of its key,
     * this one too whether it holds or waits then ({@code q}, its fence and the key's lock id; see
     * {@link JdbcWakeups}). An entry written before the listener's current LISTEN took effect counts
     * as queued behind, since notifications may have been missed.
     */
    @Override
    public boolean whenQueuedBehind(Runnable queuedBehind) {
        if (!this.store.reportsQueuedBehind()) {
            return false;
        }
        this.queuedBehind.register(queuedBehind, false);
        return true;
    }

    private boolean becomeHolder() throws EntryLostException {
        this.lock.lock();
        try {
            if (!isLost() && System.nanoTime() - this.session.renewedAt() >= this.store.livenessNanos()) {
                // The database may have expired the session: it cannot hold, whatever the last answer said.
                loseLocked(JdbcSessionKeeper.noRenewal(this.store.ttlNanos()), true);
            }
            markHoldingLocked();
            return true;
        }
        finally {
            this.lock.unlock();
        }
    }

    @Override
    public boolean release() throws StoreUnavailableException {
        if (!end()) {
            // Lost meanwhile (and reported then): remove what is left.
            this.store.removeLater(this);
            return false;
        }
        boolean released;
        try {
            released = this.store.release(this);
        }
        catch (StoreUnavailableException ex) {
            this.store.removeLater(this);
            throw ex;
        }
        if (!released) {
            lostAtRelease("its lock entry was already gone from the database at release (its session expired "
                    + "or the row was deleted)");
        }
        return released;
    }

    @Override
    public void discard() {
        end();
        this.store.removeLater(this);
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
    public long fence() {
        return this.fence;
    }

    @Override
    public @Nullable String ahead() {
        return this.ahead;
    }

    /** @return whether the entry's write committed */
    boolean isWritten() {
        return this.fence != 0;
    }

    /** @return whether the entry ended or was lost */
    boolean isOver() {
        return isEnded() || isLost();
    }

    long writtenAt() {
        return this.writtenAt;
    }

    long writeSentAt() {
        return this.writeSentAt;
    }

    /** A renewal sent at {@code sentAt} read the entry's row. */
    void found(long sentAt) {
        if (sentAt - this.confirmedAt > 0) {
            this.confirmedAt = sentAt;
        }
    }

    @Override
    public long confirmedAt() {
        return this.confirmedAt;
    }

    /**
     * Also ends a written entry whose session's deadline passed before the maintenance thread
     * noticed (a process that resumes from a pause must not believe it still holds a moment longer).
     */
    @Override
    public @Nullable String lostReason() {
        String lost = super.lostReason();
        if (lost == null && isWritten() && System.nanoTime() - this.session.renewedAt() >= this.store.livenessNanos()) {
            lose(JdbcSessionKeeper.noRenewal(this.store.ttlNanos()), true);
            lost = super.lostReason();
        }
        return lost;
    }

    @Override
    protected @Nullable String sessionLostReason() {
        return this.session.lostReason();
    }
}
