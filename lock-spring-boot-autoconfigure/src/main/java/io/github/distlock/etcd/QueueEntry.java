package io.github.distlock.etcd;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;

/**
 * One acquisition's place in a lock's etcd queue: the revision-ordered queue of etcd's
 * {@code concurrency.Mutex}. The entry with the lowest create revision under the lock's root owns
 * the lock; every other entry waits for the deletion of the entry just before it.
 *
 * <p>Costs: an uncontended acquisition is one transaction (put the entry and read the newest
 * entry before it), a release is one compare-and-delete, a handoff is that delete plus one watch
 * event and one read by the next entry only.
 *
 * <p>Invariants: the fence is the entry's create revision, and entries own the lock in create
 * revision order, so fences of one key increase strictly. Every write to the entry's key is
 * conditional on its create revision, so a late or retried request never touches a newer
 * holder's key. An entry reports ownership only after a read that found its own key (so its lease)
 * alive and no older entry.
 */
final class QueueEntry implements WatchDispatcher.Listener {

    static final String ENTRY_DELETED = "the lock entry was deleted from etcd";

    private static final long NOT_WRITTEN = -1;

    private final LockQueue queue;

    private final String lockKey;

    private final ByteSequence root;

    private final ByteSequence key;

    private final long slot;

    private final ByteSequence value;

    private final EtcdSession session;

    private final ReentrantLock stateLock = new ReentrantLock();

    private final Condition stateChanged = this.stateLock.newCondition();

    // Guarded by stateLock: what the waiting thread reacts to.
    private ByteSequence predecessor;

    private long predecessorRevision;

    private boolean readInFlight;

    /** Deletions seen while a read was on the wire: key to highest delete revision. */
    private final Map<ByteSequence, Long> deletedDuringRead = new HashMap<>();

    /** Highest revision at which a key named like ours was deleted (entry keys are reused). */
    private long ownKeyDeletedAt;

    private boolean predecessorGone;

    private boolean resyncRequested;

    /** The entry write while its outcome is unknown; {@code null} before it is sent and once it succeeded. */
    private volatile CompletableFuture<TxnResponse> write;

    private volatile long createRevision = NOT_WRITTEN;

    private volatile String predecessorOwner;

    private volatile boolean holding;

    /** Written to etcd and waiting behind an older entry. */
    private volatile boolean waiting;

    private volatile String lostReason;

    private final AtomicBoolean slotReturned = new AtomicBoolean();

    /**
     * Verifications asked for and not yet covered by a read that started after them. Only the
     * request that finds it at zero starts a verification, so a burst of resyncs (every stream
     * error of an outage) runs one chain of reads per entry, not one each.
     */
    private final AtomicInteger verificationsWanted = new AtomicInteger();

    QueueEntry(LockQueue queue, String lockKey, ByteSequence root, ByteSequence value, EtcdSession session) {
        this.queue = queue;
        this.lockKey = lockKey;
        this.root = root;
        this.slot = queue.slots().take();
        this.key = EtcdKeyspace.entry(root, session.leaseId(), this.slot);
        this.value = value;
        this.session = session;
    }

    String lockKey() {
        return this.lockKey;
    }

    ByteSequence key() {
        return this.key;
    }

    EtcdSession session() {
        return this.session;
    }

    long fence() {
        return this.createRevision;
    }

    /** Owner identity of the entry this one waits for, if known: a hint for error messages. */
    String predecessorOwner() {
        return this.predecessorOwner;
    }

    /** @return why the hold or the wait ended without our doing, or {@code null} */
    String lostReason() {
        String reason = this.lostReason;
        if (reason != null) {
            return reason;
        }
        return this.session.endReason();
    }

    /**
     * Writes the entry and waits until it owns the lock or {@code deadlineNanos} passes.
     * @param attemptDeadlineNanos deadline of the first attempt (subscribing and writing the
     * entry), which may lie past {@code deadlineNanos} so that a zero timeout still gets one try
     * @return whether the lock is owned; if not, the entry is being removed
     * @throws EntryLostException if the entry or its lease vanished while waiting
     */
    boolean acquire(long deadlineNanos, boolean timed, long attemptDeadlineNanos, boolean interruptible)
            throws EtcdCallFailedException, InterruptedException, EntryLostException {
        boolean owned = false;
        try {
            this.queue.dispatcher().subscribe(this.root, this, attemptDeadlineNanos - System.nanoTime(),
                    interruptible);
            owned = enqueue(attemptDeadlineNanos - System.nanoTime(), interruptible) && lostReason() == null;
            this.waiting = !owned;
            while (!owned) {
                String lost = lostReason();
                if (lost != null) {
                    throw new EntryLostException(lost);
                }
                long remaining = timed ? deadlineNanos - System.nanoTime() : Long.MAX_VALUE;
                if (remaining <= 0) {
                    // A try-once right after a failed one may find that one's entry, still being
                    // deleted, ahead of it: that is no holder, so wait for the delete within the attempt.
                    if (!awaitOwnLeftoverAhead(attemptDeadlineNanos, interruptible)) {
                        return false;
                    }
                    try {
                        owned = recheck(attemptDeadlineNanos - System.nanoTime(), interruptible);
                    }
                    catch (EtcdCallFailedException ex) {
                        // Out of attempt time (etcd just confirmed the delete): the lock counts as busy.
                        return false;
                    }
                    continue;
                }
                if (awaitChange(remaining, interruptible)) {
                    try {
                        // Bounded by the request timeout, not the wait: a read stuck on a frozen or
                        // partitioned member is retried (round robin sends it elsewhere).
                        long readNanos = this.queue.requestTimeoutNanos();
                        owned = recheck(timed ? Math.min(readNanos, deadlineNanos - System.nanoTime()) : readNanos,
                                interruptible);
                    }
                    catch (EtcdCallFailedException ex) {
                        // The entry and its lease may well be alive (a leader election, a slow
                        // member): keep our place and read again, until the wait or the session ends.
                        if (timed && deadlineNanos - System.nanoTime() <= 0) {
                            throw ex;
                        }
                        pauseBeforeReread(timed ? deadlineNanos - System.nanoTime() : EtcdCalls.RETRY_PAUSE_NANOS,
                                interruptible);
                    }
                }
            }
            // With resync(): either it sees holding and verifies, or we see its request here. A resync
            // during the final read means a deletion of our own key may have fallen into a watch gap.
            boolean verify;
            this.stateLock.lock();
            try {
                this.holding = true;
                verify = this.resyncRequested;
            }
            finally {
                this.stateLock.unlock();
            }
            if (verify) {
                requestVerification();
            }
            return true;
        }
        finally {
            this.waiting = false;
            if (!owned) {
                giveUp();
            }
        }
    }

    /**
     * Waits until the entry ahead of this one, if it is one this registry gave up and is deleting,
     * is gone, but not past {@code attemptDeadlineNanos}.
     * @return whether it was such an entry and is gone now
     */
    private boolean awaitOwnLeftoverAhead(long attemptDeadlineNanos, boolean interruptible)
            throws InterruptedException {
        ByteSequence ahead;
        this.stateLock.lock();
        try {
            ahead = this.predecessor;
        }
        finally {
            this.stateLock.unlock();
        }
        CompletableFuture<Void> gone = (ahead != null) ? this.queue.deleter().deletionOf(ahead) : null;
        if (gone == null) {
            return false;
        }
        try {
            EtcdCalls.await(gone, attemptDeadlineNanos - System.nanoTime(), interruptible, "own entry removal");
            return true;
        }
        catch (EtcdCallFailedException ex) {
            return false;
        }
    }

    private void pauseBeforeReread(long remainingNanos, boolean interruptible) throws InterruptedException {
        long pause = Math.min(EtcdCalls.RETRY_PAUSE_NANOS, Math.max(0, remainingNanos));
        boolean interrupted = false;
        this.stateLock.lock();
        try {
            this.resyncRequested = true;
            long left = pause;
            while (left > 0 && this.lostReason == null) {
                try {
                    left = this.stateChanged.awaitNanos(left);
                }
                catch (InterruptedException ex) {
                    if (interruptible) {
                        throw ex;
                    }
                    interrupted = true;
                }
            }
        }
        finally {
            this.stateLock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Owns the lock and has not released it; it may have been lost since. */
    boolean isHolding() {
        return this.holding;
    }

    boolean isWaiting() {
        return this.waiting;
    }

    /**
     * Puts the entry and reads the newest entry before it, in one transaction.
     * @return whether no entry is older than ours
     */
    private boolean enqueue(long callNanos, boolean interruptible)
            throws EtcdCallFailedException, InterruptedException, EntryLostException {
        beginRead();
        CompletableFuture<TxnResponse> call = this.queue.kv().txn()
            .Then(Op.put(this.key, this.value, PutOption.builder().withLeaseId(this.session.leaseId()).build()),
                    Op.get(this.root, GetOption.builder()
                        .isPrefix(true)
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.DESCEND)
                        .withLimit(2)
                        .build()))
            .commit();
        this.write = call;
        TxnResponse response;
        try {
            response = EtcdCalls.await(call, callNanos, interruptible, "lock entry write");
        }
        catch (EtcdCallFailedException ex) {
            if (!EtcdCalls.isLeaseNotFound(ex)) {
                throw ex;
            }
            // etcd rejected the put (so it wrote nothing): the session lease expired or was revoked
            // before a keep-alive could tell. Not an outage: end the session so the next attempt
            // starts a new one at once.
            this.write = null;
            String reason = "etcd no longer knows the session lease (expired or revoked)";
            this.session.abandon(reason);
            throw new EntryLostException(reason);
        }
        this.queue.terms().observe(response);
        long revision = response.getPutResponses().get(0).getHeader().getRevision();
        this.createRevision = revision;
        // Settled: holding on to the response would cost a kilobyte per held lock.
        this.write = null;
        this.stateLock.lock();
        try {
            if (this.ownKeyDeletedAt > revision) {
                this.lostReason = ENTRY_DELETED;
            }
        }
        finally {
            this.stateLock.unlock();
        }
        List<KeyValue> newest = response.getGetResponses().get(0).getKvs();
        KeyValue before = null;
        for (KeyValue kv : newest) {
            if (kv.getCreateRevision() < revision) {
                before = kv;
                break;
            }
        }
        endRead(before);
        return before == null;
    }

    /**
     * Re-reads the queue after the predecessor went away (or events may have been missed).
     * @return whether this entry now owns the lock
     */
    private boolean recheck(long callNanos, boolean interruptible)
            throws EtcdCallFailedException, InterruptedException, EntryLostException {
        beginRead();
        long revision = this.createRevision;
        TxnResponse response = EtcdCalls.await(this.queue.kv().txn()
            .If(new Cmp(this.key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
            .Then(Op.get(this.root, GetOption.builder()
                .isPrefix(true)
                .withMaxCreateRevision(revision - 1)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1)
                .build()))
            .commit(), Math.max(callNanos, 0), interruptible, "lock queue read");
        this.queue.terms().observe(response);
        if (!response.isSucceeded()) {
            this.lostReason = ENTRY_DELETED + " while waiting";
            throw new EntryLostException(this.lostReason);
        }
        GetResponse older = response.getGetResponses().get(0);
        KeyValue before = older.getKvs().isEmpty() ? null : older.getKvs().get(0);
        endRead(before);
        return before == null && lostReason() == null;
    }

    private void beginRead() {
        this.stateLock.lock();
        try {
            this.readInFlight = true;
            this.predecessor = null;
            this.predecessorGone = false;
            this.resyncRequested = false;
            this.deletedDuringRead.clear();
        }
        finally {
            this.stateLock.unlock();
        }
    }

    private void endRead(KeyValue before) {
        this.stateLock.lock();
        try {
            this.readInFlight = false;
            if (before == null) {
                this.predecessor = null;
                this.predecessorGone = true;
            }
            else {
                this.predecessor = before.getKey();
                this.predecessorRevision = before.getCreateRevision();
                this.predecessorOwner = EntryValue.decode(before.getValue()).describe();
                // Its deletion may have been dispatched while our read was on the wire; a delete
                // older than its creation belongs to an earlier entry with the same key.
                Long deletedAt = this.deletedDuringRead.get(this.predecessor);
                this.predecessorGone = deletedAt != null && deletedAt > this.predecessorRevision;
            }
            this.deletedDuringRead.clear();
        }
        finally {
            this.stateLock.unlock();
        }
    }

    /**
     * Waits until the predecessor is gone, a resync is requested, the entry is lost, or the
     * safety re-read interval passes.
     * @return whether the queue must be re-read; false on timeout or loss
     */
    private boolean awaitChange(long remainingNanos, boolean interruptible) throws InterruptedException {
        long waitNanos = Math.min(remainingNanos, this.queue.safetyRecheckNanos());
        boolean interrupted = false;
        this.stateLock.lock();
        try {
            while (!this.predecessorGone && !this.resyncRequested && this.lostReason == null
                    && this.session.isAlive() && waitNanos > 0) {
                try {
                    waitNanos = this.stateChanged.awaitNanos(waitNanos);
                }
                catch (InterruptedException ex) {
                    if (interruptible) {
                        throw ex;
                    }
                    interrupted = true;
                }
            }
            if (this.lostReason != null || !this.session.isAlive()) {
                return false;
            }
            // Past the safety interval without news: re-read anyway, unless the caller's time is up.
            return this.predecessorGone || this.resyncRequested || remainingNanos > this.queue.safetyRecheckNanos();
        }
        finally {
            this.stateLock.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void deleted(ByteSequence etcdKey, long revision) {
        if (etcdKey.equals(this.key)) {
            ownKeyDeleted(revision);
            return;
        }
        this.stateLock.lock();
        try {
            if (this.readInFlight) {
                this.deletedDuringRead.merge(etcdKey, revision, Math::max);
            }
            else if (etcdKey.equals(this.predecessor) && revision > this.predecessorRevision) {
                this.predecessorGone = true;
                this.stateChanged.signalAll();
            }
        }
        finally {
            this.stateLock.unlock();
        }
    }

    /**
     * A key named like ours was deleted at {@code revision}. Keys are reused once their previous
     * entry is confirmed deleted, and that delete's event may arrive after we subscribed: only a
     * delete after our own write means our entry is gone.
     */
    private void ownKeyDeleted(long revision) {
        long written = this.createRevision;
        if (written == NOT_WRITTEN) {
            this.stateLock.lock();
            try {
                this.ownKeyDeletedAt = Math.max(this.ownKeyDeletedAt, revision);
            }
            finally {
                this.stateLock.unlock();
            }
            // The write may have landed meanwhile: decide with its revision (enqueue checks
            // ownKeyDeletedAt itself if it lands later).
            written = this.createRevision;
        }
        if (written != NOT_WRITTEN && revision > written) {
            markLost(ENTRY_DELETED);
        }
    }

    @Override
    public void resync() {
        boolean held;
        this.stateLock.lock();
        try {
            held = this.holding;
            this.resyncRequested = true;
            this.stateChanged.signalAll();
        }
        finally {
            this.stateLock.unlock();
        }
        if (held) {
            requestVerification();
        }
    }

    /** The session ended: the entry's key is gone with the lease (or soon will be). */
    void sessionEnded(String reason) {
        markLost(reason);
    }

    private void markLost(String reason) {
        boolean first;
        this.stateLock.lock();
        try {
            first = this.lostReason == null;
            if (first) {
                this.lostReason = reason;
            }
            this.stateChanged.signalAll();
        }
        finally {
            this.stateLock.unlock();
        }
        // A hold is reported lost once, however many ways its loss shows.
        if (first && this.holding) {
            this.queue.holdLost(this, reason);
        }
    }

    /**
     * Checks in the background that a held entry's key still exists, after events may have been
     * missed. Retried until etcd answers, while the hold lasts: if etcd stays away, the session's
     * TTL ends the hold instead.
     */
    private void requestVerification() {
        if (this.verificationsWanted.getAndIncrement() == 0) {
            verifyHold(1);
        }
    }

    private void verifyHold(int attempt) {
        if (!this.holding || lostReason() != null) {
            // The hold is over: nothing left to verify, now or for later requests.
            return;
        }
        // Requests up to now are answered by this read; later ones need a read of their own.
        int covered = this.verificationsWanted.get();
        long revision = this.createRevision;
        this.queue.kv().txn()
            .If(new Cmp(this.key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
            .commit()
            .orTimeout(this.queue.requestTimeoutNanos(), TimeUnit.NANOSECONDS)
            .whenComplete((response, failure) -> {
                if (failure == null) {
                    if (!response.isSucceeded() && this.holding) {
                        markLost(ENTRY_DELETED);
                    }
                    if (this.verificationsWanted.addAndGet(-covered) > 0) {
                        verifyHold(1);
                    }
                    return;
                }
                this.queue.failed();
                this.queue.schedule(() -> verifyHold(attempt + 1),
                        Math.min(EtcdCalls.RETRY_PAUSE_NANOS * attempt, this.queue.requestTimeoutNanos()));
            });
    }

    /**
     * Releases a held entry with a compare-and-delete.
     * @return false if the entry was already gone (the hold had been lost)
     * @throws EtcdCallFailedException if etcd did not answer; the delete is then retried in the
     * background
     */
    boolean release() throws EtcdCallFailedException {
        this.holding = false;
        this.queue.dispatcher().unsubscribe(this.root, this);
        try {
            TxnResponse response = EtcdCalls.awaitUninterruptibly(compareAndDelete(),
                    this.queue.requestTimeoutNanos(), "lock release");
            this.queue.terms().observe(response);
            confirmedGone();
            return response.isSucceeded();
        }
        catch (EtcdCallFailedException ex) {
            this.queue.deleter().deleteUntilGone(this);
            throw ex;
        }
    }

    /** Drops a lost hold: stops listening and deletes the key in the background in case it is still there. */
    void discard() {
        this.holding = false;
        this.queue.dispatcher().unsubscribe(this.root, this);
        this.queue.deleter().deleteUntilGone(this);
    }

    /** Removes a waiting entry without blocking the caller; failures are retried in the background. */
    private void giveUp() {
        this.queue.dispatcher().unsubscribe(this.root, this);
        CompletableFuture<TxnResponse> pendingWrite = this.write;
        if (this.createRevision == NOT_WRITTEN && pendingWrite == null) {
            // Never sent: the number was not used.
            returnSlot();
            return;
        }
        if (this.createRevision == NOT_WRITTEN) {
            // The write's fate is unknown: it may still be retried by the client, or applied by
            // etcd after our delete. Delete now, again once the write settles, and have the
            // registry sweep its lease for entries nobody owns.
            this.queue.uncertainWrite();
            this.queue.deleter().deleteUntilGone(this);
            pendingWrite.whenComplete((response, failure) -> {
                if (failure == null) {
                    this.createRevision = response.getPutResponses().get(0).getHeader().getRevision();
                    this.queue.deleter().deleteUntilGone(this);
                }
            });
            return;
        }
        this.queue.deleter().deleteUntilGone(this);
    }

    /**
     * Deletes this entry's key if it is still the one we wrote. An entry whose write never got an
     * answer is deleted by key alone: entry keys are unique per acquisition, so no one else owns it.
     */
    CompletableFuture<TxnResponse> compareAndDelete() {
        long revision = this.createRevision;
        if (revision == NOT_WRITTEN) {
            return this.queue.kv().txn().Then(Op.delete(this.key, DeleteOption.DEFAULT)).commit();
        }
        return this.queue.kv().txn()
            .If(new Cmp(this.key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision)))
            .Then(Op.delete(this.key, DeleteOption.DEFAULT))
            .commit();
    }

    /**
     * etcd answered a compare-and-delete of this entry: the key is gone. Its number may be reused,
     * unless the entry's write never got an answer (it could still appear).
     */
    void confirmedGone() {
        if (this.createRevision != NOT_WRITTEN && this.write == null) {
            returnSlot();
        }
    }

    /** The session ended: its lease id is in this entry's key, so the number is free for later sessions. */
    void sessionOver() {
        returnSlot();
    }

    private void returnSlot() {
        if (this.slotReturned.compareAndSet(false, true)) {
            this.queue.slots().giveBack(this.slot);
        }
    }

    String describeKey() {
        return EtcdKeyspace.text(this.key);
    }

    /** The entry's key or lease vanished before it could own the lock. */
    static final class EntryLostException extends Exception {

        private static final long serialVersionUID = 1L;

        EntryLostException(String reason) {
            super(reason);
        }
    }
}
