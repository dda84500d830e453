package io.github.distlock.etcd;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * What the thread of one {@link QueueEntry} waits on, apart from the protocol that decides who
 * holds: the predecessor it waits for, deletions delivered by the watch, resync requests after
 * possible gaps in the watch, and the entry's loss.
 *
 * <p>Invariants, all under {@link #lock}: a deletion delivered while a queue read is on the wire
 * is remembered and applied to the predecessor that read finds, so a handoff in that window is
 * never missed; a deletion of a key named like the entry's own counts only if it is newer than
 * the entry's write (keys are reused); the loss reason is set once and reported as a lost hold
 * exactly once: by {@link #markLost} if the entry held then, by the release if it was seen while
 * releasing, never if the entry had not become the holder (which {@link #becomeHolder()} then
 * refuses); becoming the holder and a resync request are ordered by the lock, so a resync during
 * the final read is seen either by the holder or by {@link #resync()}.
 */
final class EntryMonitor {

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition changed = this.lock.newCondition();

    private final BooleanSupplier sessionAlive;

    private @Nullable ByteSequence predecessor;

    private long predecessorRevision;

    private boolean readInFlight;

    /** Deletions seen while a read was on the wire: key to highest delete revision. */
    private final Map<ByteSequence, Long> deletedDuringRead = new HashMap<>();

    /**
     * Every entry ahead of ours (key to create revision), when the last read saw the whole queue;
     * {@code null} when it saw only the predecessor. Deletions delivered by the watch shrink it, and
     * the waiter is woken once it is empty: the read it then makes decides, since the watch shows
     * the queue only as of the revision it got to, and our own entry may be gone since.
     */
    private @Nullable Map<ByteSequence, Long> ahead;

    /** Owners of the entries in {@link #ahead}, for messages. */
    private final Map<ByteSequence, String> aheadOwners = new HashMap<>();

    /** Highest revision at which a key named like ours was deleted (entry keys are reused). */
    private long ownKeyDeletedAt;

    private boolean predecessorGone;

    private boolean resyncRequested;

    /**
     * A read got no answer in time: read again. Unlike a resync (events may have been missed), any
     * answer of the read under way settles it, and the hold it grants needs no verification.
     */
    private boolean readFailed;

    private volatile @Nullable String predecessorOwner;

    private volatile boolean holding;

    private volatile @Nullable String lostReason;

    /** Our own release or discard started: a loss seen from now on is reported by the release. */
    private boolean releasing;

    /** The loss was first seen while releasing, and the release has not reported it yet. */
    private boolean lostWhileReleasing;

    /** @param sessionAlive whether the entry's session is alive right now */
    EntryMonitor(BooleanSupplier sessionAlive) {
        this.sessionAlive = sessionAlive;
    }

    /** A read of the queue is about to be sent: forget what an older read found. */
    void beginRead() {
        this.lock.lock();
        try {
            this.readInFlight = true;
            this.predecessor = null;
            this.ahead = null;
            this.aheadOwners.clear();
            this.predecessorGone = false;
            this.resyncRequested = false;
            this.readFailed = false;
            this.deletedDuringRead.clear();
        }
        finally {
            this.lock.unlock();
        }
    }

    /** The read found {@code before} just ahead of the entry, or nothing ({@code null}). */
    void endRead(@Nullable KeyValue before) {
        this.lock.lock();
        try {
            this.readInFlight = false;
            this.readFailed = false;
            if (before == null) {
                this.predecessor = null;
                this.predecessorGone = true;
            }
            else {
                this.predecessor = before.getKey();
                this.predecessorRevision = before.getCreateRevision();
                this.predecessorOwner = EntryValue.decode(EtcdKeyspace.text(before.getValue())).describe();
                // Its deletion may have been dispatched while our read was on the wire; a delete
                // older than its creation belongs to an earlier entry with the same key.
                Long deletedAt = this.deletedDuringRead.get(this.predecessor);
                this.predecessorGone = deletedAt != null && deletedAt > this.predecessorRevision;
            }
            this.deletedDuringRead.clear();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * The read found every entry ahead of ours: {@code older}, newest first (empty if none).
     * Deletions seen while it was on the wire are applied to them.
     */
    void endReadOfWholeQueue(List<KeyValue> older) {
        this.lock.lock();
        try {
            this.readInFlight = false;
            this.readFailed = false;
            Map<ByteSequence, Long> remaining = new HashMap<>();
            KeyValue newest = null;
            for (KeyValue kv : older) {
                Long deletedAt = this.deletedDuringRead.get(kv.getKey());
                if (deletedAt == null || deletedAt <= kv.getCreateRevision()) {
                    remaining.put(kv.getKey(), kv.getCreateRevision());
                    this.aheadOwners.put(kv.getKey(), EntryValue.decode(EtcdKeyspace.text(kv.getValue())).describe());
                    newest = (newest == null || kv.getCreateRevision() > newest.getCreateRevision()) ? kv : newest;
                }
            }
            this.deletedDuringRead.clear();
            this.ahead = remaining;
            followNewestAhead();
        }
        finally {
            this.lock.unlock();
        }
    }

    /** With the whole queue known: the predecessor is the newest entry left ahead, and gone when none is. */
    private void followNewestAhead() {
        Map<ByteSequence, Long> known = Objects.requireNonNull(this.ahead);
        ByteSequence newest = null;
        long newestRevision = 0;
        for (Map.Entry<ByteSequence, Long> entry : known.entrySet()) {
            if (newest == null || entry.getValue() > newestRevision) {
                newest = entry.getKey();
                newestRevision = entry.getValue();
            }
        }
        this.predecessor = newest;
        this.predecessorRevision = newestRevision;
        this.predecessorGone = newest == null;
        if (newest != null) {
            this.predecessorOwner = this.aheadOwners.get(newest);
        }
    }

    /** Another entry's key was deleted at {@code revision}. */
    void deleted(ByteSequence etcdKey, long revision) {
        this.lock.lock();
        try {
            if (this.readInFlight) {
                this.deletedDuringRead.merge(etcdKey, revision, Math::max);
            }
            else if (this.ahead != null) {
                Long createdAt = this.ahead.get(etcdKey);
                if (createdAt != null && revision > createdAt) {
                    this.ahead.remove(etcdKey);
                    this.aheadOwners.remove(etcdKey);
                    followNewestAhead();
                    if (this.predecessorGone) {
                        this.changed.signalAll();
                    }
                }
            }
            else if (etcdKey.equals(this.predecessor) && revision > this.predecessorRevision) {
                this.predecessorGone = true;
                this.changed.signalAll();
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /** A key named like the entry's own was deleted at {@code revision}, before its write was known. */
    void ownKeyDeletedBeforeWrite(long revision) {
        this.lock.lock();
        try {
            this.ownKeyDeletedAt = Math.max(this.ownKeyDeletedAt, revision);
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return whether a key named like ours was deleted after our write at {@code revision} */
    boolean ownKeyDeletedAfter(long revision) {
        this.lock.lock();
        try {
            return this.ownKeyDeletedAt > revision;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Waits until the predecessor is gone, a resync is requested, the entry is lost, or the
     * safety re-read interval passes.
     * @return whether the queue must be re-read; false on timeout or loss
     */
    boolean awaitChange(Wait wait, long safetyNanos) throws InterruptedException {
        // Past the safety interval without news: re-read anyway, unless the caller's time is up.
        boolean rereadAnyway = wait.remainingNanos() > safetyNanos;
        return wait.atMost(safetyNanos).block(remaining -> {
            this.lock.lock();
            try {
                long left = remaining;
                while (!this.predecessorGone && !this.resyncRequested && !this.readFailed && this.lostReason == null
                        && this.sessionAlive.getAsBoolean() && left > 0) {
                    left = this.changed.awaitNanos(left);
                }
                if (this.lostReason != null || !this.sessionAlive.getAsBoolean()) {
                    return false;
                }
                return this.predecessorGone || this.resyncRequested || this.readFailed || rereadAnyway;
            }
            finally {
                this.lock.unlock();
            }
        });
    }

    /** Waits a retry pause after a failed read (less if the entry is lost), and asks for a re-read. */
    void pauseBeforeReread(Wait wait) throws InterruptedException {
        wait.atMost(EtcdCalls.RETRY_PAUSE_NANOS).block(remaining -> {
            this.lock.lock();
            try {
                this.readFailed = true;
                long left = remaining;
                while (left > 0 && this.lostReason == null) {
                    left = this.changed.awaitNanos(left);
                }
                return null;
            }
            finally {
                this.lock.unlock();
            }
        });
    }

    /**
     * The final read found no older entry: the entry owns the lock from now on, unless it was lost
     * meanwhile. Under the lock with {@link #markLost}, so a loss is either seen here (and the hold
     * refused) or reported as a lost hold, never neither.
     * @return how the handover went
     */
    Handover becomeHolder() {
        this.lock.lock();
        try {
            if (this.lostReason != null || !this.sessionAlive.getAsBoolean()) {
                return Handover.LOST;
            }
            this.holding = true;
            return this.resyncRequested ? Handover.HOLDING_UNVERIFIED : Handover.HOLDING;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Events may have been missed: the waiting thread re-reads.
     * @return whether the entry holds, so that the hold must be verified instead
     */
    boolean resync() {
        this.lock.lock();
        try {
            this.resyncRequested = true;
            this.changed.signalAll();
            return this.holding;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Records the loss, once.
     * @return whether this was the first loss and the entry held: the hold must be reported lost
     */
    boolean markLost(String reason) {
        this.lock.lock();
        try {
            boolean first = this.lostReason == null;
            if (first) {
                this.lostReason = reason;
                this.lostWhileReleasing = this.releasing;
            }
            this.changed.signalAll();
            return first && this.holding;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Our own release or discard starts: the deletion it causes is no lost hold.
     * @return whether the entry was not lost before: a loss recorded earlier was reported then, and
     * the release must say so too, even if it could still delete the key
     */
    boolean released() {
        this.lock.lock();
        try {
            this.holding = false;
            this.releasing = true;
            return this.lostReason == null;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * The release found the entry already gone: the hold ended before its unlock.
     * @return whether that loss is still to be reported (it was not reported while held)
     */
    boolean lostAtRelease(String reason) {
        this.lock.lock();
        try {
            boolean first = this.lostReason == null;
            if (first) {
                this.lostReason = reason;
            }
            boolean report = first || this.lostWhileReleasing;
            this.lostWhileReleasing = false;
            return report;
        }
        finally {
            this.lock.unlock();
        }
    }

    boolean isHolding() {
        return this.holding;
    }

    @Nullable String lostReason() {
        return this.lostReason;
    }

    /** @return the owner of the entry ahead, as last read */
    @Nullable String predecessorOwner() {
        return this.predecessorOwner;
    }

    /** @return the key of the entry ahead, as last read, or {@code null} if none or a read is in flight */
    @Nullable ByteSequence predecessor() {
        this.lock.lock();
        try {
            return this.predecessor;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** How {@link #becomeHolder()} went. */
    enum Handover {

        /** The entry holds. */
        HOLDING,

        /** The entry holds, but events may have been missed during the final read: verify the hold. */
        HOLDING_UNVERIFIED,

        /** The entry or its session was lost first: it does not hold. */
        LOST
    }
}
