package io.github.distlock.etcd;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.QueuedBehindSignal;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition's place in a lock's etcd queue: the protocol of etcd's {@code concurrency.Mutex}.
 * The entry with the lowest create revision under the lock's root owns the lock; every other
 * entry waits for the deletion of the entry just before it. What the waiting thread reacts to
 * (deletions, resyncs, loss) lives in its {@link EntryMonitor}.
 *
 * <p>As in {@code mutex.go}: {@link #enqueue} puts the entry and reads the newest older one in one
 * transaction (Lock's put and get); if there is none, the entry owns the lock; otherwise it waits
 * for that predecessor's deletion and {@link #recheck re-reads} (waitDeletes), which also checks
 * that its own key still exists; {@link #release} deletes the key (Unlock).
 *
 * <p>Costs: an uncontended acquisition is one transaction, a release is one compare-and-delete, a
 * handoff is that delete plus one watch event and one read by the next entry only. That read is
 * never skipped, also when the watch alone shows that no entry is ahead any more: only a read
 * shows that the entry still exists now, and not merely as of the revision the watch got to.
 *
 * <p>Invariants: the fence is the entry's create revision, and entries own the lock in create
 * revision order, so fences of one key increase strictly. Every write to the entry's key is
 * conditional on its create revision (the put on there being none), so a late or retried request
 * never touches a newer holder's key. An entry reports ownership only after a read that found its
 * own key (so its lease) alive and no older entry.
 */
final class QueueEntry implements StoreEntry, WatchDispatcher.Listener {

    static final String ENTRY_DELETED = "the lock entry was deleted from etcd";

    private static final long NOT_WRITTEN = -1;

    /**
     * How many entries the write's own read returns, newest first: with at most this many under
     * the root (ours included) the read sees the whole queue, and a handoff needs no further read.
     */
    private static final int WHOLE_QUEUE_READ = 16;

    /** The queue read of an entry write: the newest {@value #WHOLE_QUEUE_READ} entries of the key. */
    private static final GetOption NEWEST_FIRST = GetOption.builder()
        .isPrefix(true)
        .withSortField(GetOption.SortTarget.CREATE)
        .withSortOrder(GetOption.SortOrder.DESCEND)
        .withLimit(WHOLE_QUEUE_READ)
        .build();

    private final EtcdLockStore store;

    private final String lockKey;

    private final ByteSequence root;

    private final ByteSequence key;

    private final long slot;

    private final ByteSequence value;

    private final EtcdSession session;

    private final EntryMonitor monitor;

    /** Others' deletions delivered by the watch, applied once their response was delivered whole. */
    private final ConcurrentLinkedQueue<Deletion> othersDeleted = new ConcurrentLinkedQueue<>();

    /** The entry write's first answer while none came; {@code null} before it is sent and once one came. */
    private volatile @Nullable CompletableFuture<TxnResponse> write;

    private volatile long createRevision = NOT_WRITTEN;

    /** The write was sent again: an attempt may still be applied later, so the slot is never reused. */
    private volatile boolean sentTwice;

    /** Whether a try-once already read the queue again for an entry of its own session ahead of it. */
    private boolean leftoverReread;

    /** The attempts of the queue read in progress; touched by the acquiring thread only. */
    private EtcdCalls.@Nullable Attempts<TxnResponse> reread;

    /** Written to etcd and waiting behind an older entry. */
    private volatile boolean waiting;

    private final AtomicBoolean slotReturned = new AtomicBoolean();

    private final HoldVerifier verifier;

    /** The newest create revision seen under the root, other than ours: an entry behind ours if above ours. */
    private final AtomicLong newestSeen = new AtomicLong();

    /** Told once when an entry is queued behind ours; see {@link #whenQueuedBehind}. */
    private final QueuedBehindSignal queuedBehind = new QueuedBehindSignal();

    QueueEntry(EtcdLockStore store, String lockKey, ByteSequence root, ByteSequence value, EtcdSession session) {
        this.store = store;
        this.lockKey = lockKey;
        this.root = root;
        this.slot = store.slots().take();
        this.key = EtcdKeyspace.entry(root, session.leaseId(), this.slot);
        this.value = value;
        this.session = session;
        this.monitor = new EntryMonitor(session::isAlive);
        this.verifier = new HoldVerifier(this, store);
    }

    @Override
    public String lockKey() {
        return this.lockKey;
    }

    ByteSequence key() {
        return this.key;
    }

    EtcdSession session() {
        return this.session;
    }

    @Override
    public long fence() {
        return this.createRevision;
    }

    /** Owner identity of the entry this one waits for, if known: a hint for error messages. */
    @Override
    public @Nullable String ahead() {
        return this.monitor.predecessorOwner();
    }

    /**
     * Also takes the end of the entry's session before {@link SessionKeeper} tells the entry (it
     * may be the clock's deadline, with the session thread still to act on it): the loss goes
     * through {@link #markLost} so that it is reported exactly once, even if the entry is
     * discarded (an unlock) before the session's turn to tell it comes.
     * @return why the hold or the wait ended without our doing, or {@code null}
     */
    @Override
    public @Nullable String lostReason() {
        String reason = this.monitor.lostReason();
        if (reason == null) {
            String sessionEnded = this.session.endReason();
            if (sessionEnded == null) {
                return null;
            }
            markLost(sessionEnded);
            reason = this.monitor.lostReason();
        }
        return reason;
    }

    /** Owns the lock and has not released it; it may have been lost since. */
    @Override
    public boolean isHolding() {
        return this.monitor.isHolding();
    }

    /** A compare that succeeds while the entry's key is still the one it wrote. */
    Cmp stillWritten() {
        return writtenAt(this.createRevision);
    }

    private Cmp writtenAt(long revision) {
        return createdAt(this.key, revision);
    }

    /** A compare that succeeds while {@code key} is the one created at {@code revision}, not a later reuse. */
    static Cmp createdAt(ByteSequence key, long revision) {
        return new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(revision));
    }

    /** Deletes {@code key} only if it is still the one created at {@code revision}. */
    static CompletableFuture<TxnResponse> deleteIfCreatedAt(KV kv, ByteSequence key, long revision) {
        return kv.txn().If(createdAt(key, revision)).Then(Op.delete(key, DeleteOption.DEFAULT)).commit();
    }

    @Override
    public boolean isWaiting() {
        return this.waiting;
    }

    @Override
    public boolean acquire(Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        boolean owned = false;
        try {
            this.store.dispatcher().subscribe(this.root, this, attempt);
            owned = enqueue(attempt) && lostReason() == null;
            this.waiting = !owned;
            while (!owned) {
                String lost = lostReason();
                if (lost != null) {
                    throw lost(lost);
                }
                if (wait.isOver()) {
                    // A try-once right after a failed one may find that one's entry, still being
                    // deleted, ahead of it: that is no holder, so wait for the delete within the attempt.
                    if (!awaitOwnLeftoverAhead(attempt)) {
                        return false;
                    }
                    try {
                        owned = recheck(attempt);
                    }
                    catch (StoreUnavailableException ex) {
                        // Out of attempt time (etcd just confirmed the delete): the lock counts as busy.
                        return false;
                    }
                    continue;
                }
                if (this.monitor.awaitChange(wait, this.store.safetyRecheckNanos())) {
                    // Even when the watch showed every entry ahead gone, the read decides: the watch may
                    // lag behind etcd (a stream on a member catching up after a freeze), and our own
                    // entry may have been deleted after the last deletion it delivered (a lease revoked
                    // by a resumed deposed leader, a delete by hand), with the session alive on our clock.
                    // Bounded by one attempt, not only the wait: a read stuck on a frozen or partitioned
                    // member, or on one whose leader died, is sent again (round robin sends it elsewhere).
                    Wait read = wait.atMost(this.store.idempotentAttemptNanos());
                    boolean boundByWait = read.deadlineNanos() == wait.deadlineNanos();
                    try {
                        owned = recheck(read);
                    }
                    catch (StoreUnavailableException ex) {
                        if (wait.isOver() && boundByWait && ex.getCause() instanceof TimeoutException) {
                            // The wait ran out during a read it cut short, not the store: the lock
                            // counts as busy, as for a try-once (an exception here made a
                            // LockRegistryLeaderInitiator back off after a yield, and counted as a store error).
                            return false;
                        }
                        // The entry and its lease may well be alive (a leader election, a slow
                        // member): keep our place and read again, until the wait or the session ends.
                        if (wait.isOver()) {
                            throw ex;
                        }
                        this.monitor.pauseBeforeReread(wait);
                    }
                }
            }
            EntryMonitor.Handover handover = this.monitor.becomeHolder();
            if (handover == EntryMonitor.Handover.LOST) {
                // Lost between the final read and now: not a hold, so not a lost hold; queue again.
                owned = false;
                String reason = lostReason();
                throw lost((reason != null) ? reason : ENTRY_DELETED);
            }
            // A resync during the final read means a deletion of our own key may have fallen into a watch gap.
            if (handover == EntryMonitor.Handover.HOLDING_UNVERIFIED) {
                this.verifier.request();
            }
            return true;
        }
        catch (StoreUnavailableException ex) {
            this.store.failed();
            throw ex;
        }
        finally {
            this.waiting = false;
            if (!owned) {
                giveUp();
            }
        }
    }

    /** The entry vanished while waiting: with its session (etcd failing) or on its own (etcd answered). */
    private EntryLostException lost(String reason) {
        return new EntryLostException(reason, !this.session.isAlive());
    }

    /**
     * Waits until the entry ahead of this one, if it is one this registry gave up and is deleting,
     * is gone, but not past {@code attempt}.
     * @return whether it was such an entry and is gone now
     */
    private boolean awaitOwnLeftoverAhead(Wait attempt) throws InterruptedException {
        ByteSequence ahead = this.monitor.predecessor();
        if (ahead == null) {
            return false;
        }
        CompletableFuture<Void> gone = this.store.cleanup().deletionOf(ahead);
        if (gone == null) {
            // Its deletion may have been confirmed between our read and now: an entry of this session
            // ahead is read once more (it may also be another thread's hold, which that read shows).
            boolean ownSession = ahead.startsWith(EtcdKeyspace.entryPrefix(this.root, this.session.leaseId()));
            boolean readAgain = ownSession && !this.leftoverReread;
            this.leftoverReread = true;
            return readAgain;
        }
        try {
            EtcdCalls.await(gone, attempt, "own entry removal");
            return true;
        }
        catch (StoreUnavailableException ex) {
            return false;
        }
    }

    /**
     * Puts the entry and reads the newest entries before it, in one transaction.
     * @return whether no entry is older than ours
     */
    private boolean enqueue(Wait attempt) throws StoreUnavailableException, InterruptedException, EntryLostException {
        this.monitor.beginRead();
        TxnResponse response;
        try {
            response = writeEntry(attempt);
        }
        catch (StoreUnavailableException ex) {
            if (!EtcdCalls.isLeaseNotFound(ex)) {
                throw ex;
            }
            // etcd rejected the put (so it wrote nothing): the session lease expired or was revoked
            // before a keep-alive could tell. Not an outage: end the session so the next attempt
            // starts a new one at once.
            this.write = null;
            String reason = "etcd no longer knows the session lease (expired or revoked)";
            this.session.abandon(reason);
            throw lost(reason);
        }
        this.store.terms().observe(response);
        long revision = writtenAt(response);
        this.createRevision = revision;
        // Settled: holding on to the response would cost a kilobyte per held lock.
        this.write = null;
        if (this.monitor.ownKeyDeletedAfter(revision)) {
            this.monitor.markLost(ENTRY_DELETED);
        }
        GetResponse queue = response.getGetResponses().get(response.getGetResponses().size() - 1);
        List<KeyValue> older = new ArrayList<>();
        for (KeyValue kv : queue.getKvs()) {
            if (kv.getCreateRevision() < revision) {
                older.add(kv);
            }
        }
        if (queue.getCount() <= queue.getKvs().size()) {
            // The read saw the whole queue: the watch alone tells when every entry ahead is gone.
            this.monitor.endReadOfWholeQueue(older);
        }
        else if (older.isEmpty()) {
            // Only an answer adopting an earlier attempt's entry can be cut off before reaching it
            // (entries were queued behind it meanwhile): read the entry just ahead of it alone.
            return recheck(attempt);
        }
        else {
            this.monitor.endRead(older.get(0));
        }
        return older.isEmpty();
    }

    /**
     * Sends the entry's write, and sends it again after every {@link EtcdLockStore#idempotentAttemptNanos()
     * attempt interval} without an answer until {@code attempt} ends: a write forwarded to a leader
     * that died or froze would otherwise wait out the whole request timeout. The first answer of
     * any attempt counts.
     *
     * <p>Invariant: the put is conditional on the key not existing, and the key is this
     * acquisition's alone (the slot is never reused once the write was sent twice), so however
     * many attempts etcd applies, the entry is written at most once while it lives. An attempt
     * applied after the entry was deleted writes a key with our lease that nobody owns: it is
     * deleted when its answer comes ({@link #lateWriteAnswered}), and the session lease is
     * {@linkplain EntryCleanup#followUnanswered swept} while an attempt has no answer.
     */
    private TxnResponse writeEntry(Wait attempt) throws StoreUnavailableException, InterruptedException {
        EtcdCalls.Attempts<TxnResponse> attempts = new EtcdCalls.Attempts<>(this::lateWriteAnswered);
        this.write = attempts.firstAnswer();
        while (true) {
            CompletableFuture<TxnResponse> sent = entryWrite();
            Wait slice = attempt.atMost(this.store.idempotentAttemptNanos());
            boolean boundByAttempt = slice.deadlineNanos() == attempt.deadlineNanos();
            try {
                return EtcdCalls.await(attempts.send(sent), slice, "lock entry write");
            }
            catch (StoreUnavailableException ex) {
                if (boundByAttempt || !(ex.getCause() instanceof TimeoutException)) {
                    throw ex;
                }
                this.sentTwice = true;
            }
            finally {
                // Unless it answered, it may still be applied, even after the entry is gone.
                this.store.cleanup().followUnanswered(sent);
            }
        }
    }

    /**
     * An attempt of the entry's write answered after another had. If it put the entry at another
     * revision than the first answer says, etcd applied it after the entry's key was deleted (a
     * release, a give-up, a loss): the key is nobody's and would hold up the queue while the
     * session lives, so it goes at once.
     */
    private void lateWriteAnswered(TxnResponse late, TxnResponse first) {
        if (late.isSucceeded()) {
            long revision = writtenAt(late);
            if (revision != writtenAt(first)) {
                this.store.cleanup().deleteLateWrite(this, revision);
            }
        }
    }

    /** One attempt of the entry's write: put it unless it exists, and read the queue up to it. */
    private CompletableFuture<TxnResponse> entryWrite() {
        return this.store.kv().txn()
            .If(new Cmp(this.key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(this.key, this.value, PutOption.builder().withLeaseId(this.session.leaseId()).build()),
                    Op.get(this.root, NEWEST_FIRST))
            .Else(Op.get(this.key, GetOption.DEFAULT), Op.get(this.root, NEWEST_FIRST))
            .commit();
    }

    /**
     * The revision an {@link #entryWrite() entry write} put the entry at, or, if an earlier
     * attempt had put it, the revision that attempt put it at.
     */
    static long writtenAt(TxnResponse response) {
        if (response.isSucceeded()) {
            return response.getPutResponses().get(0).getHeader().getRevision();
        }
        List<KeyValue> own = response.getGetResponses().get(0).getKvs();
        if (own.isEmpty()) {
            throw new IllegalStateException("etcd answered an entry write with neither a put nor the entry");
        }
        return own.get(0).getCreateRevision();
    }

    /**
     * Re-reads the queue after the predecessor went away (or events may have been missed), and
     * checks in the same transaction that our own key is still the one we wrote.
     * @return whether this entry now owns the lock
     */
    private boolean recheck(Wait call) throws StoreUnavailableException, InterruptedException, EntryLostException {
        // A read whose attempts got no answer in time goes on: its first answer counts, whichever
        // attempt it comes from, and deletions the watch delivered since it began still apply to it
        // (a resync meanwhile asks for another read after it). Otherwise, with every answer slower
        // than an attempt, no read would ever count.
        EtcdCalls.Attempts<TxnResponse> attempts = this.reread;
        if (attempts == null) {
            this.monitor.beginRead();
            attempts = new EtcdCalls.Attempts<>();
            this.reread = attempts;
        }
        CompletableFuture<TxnResponse> answer = attempts.firstAnswer().isDone() ? attempts.firstAnswer()
                : attempts.send(queueRead(this.createRevision));
        TxnResponse response = EtcdCalls.await(answer, call, "lock queue read");
        this.reread = null;
        this.store.terms().observe(response);
        if (!response.isSucceeded()) {
            String reason = ENTRY_DELETED + " while waiting";
            this.monitor.markLost(reason);
            throw lost(reason);
        }
        GetResponse older = response.getGetResponses().get(0);
        KeyValue before = older.getKvs().isEmpty() ? null : older.getKvs().get(0);
        this.monitor.endRead(before);
        return before == null && lostReason() == null;
    }

    /**
     * Reads the entry just ahead of ours (written at {@code revision}) if our key is still the one
     * we wrote.
     */
    private CompletableFuture<TxnResponse> queueRead(long revision) {
        return this.store.kv().txn()
            .If(writtenAt(revision))
            .Then(Op.get(this.root, GetOption.builder()
                .isPrefix(true)
                .withMaxCreateRevision(revision - 1)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.DESCEND)
                .withLimit(1)
                .build()))
            .commit();
    }

    // ---- watch events --------------------------------------------------------------------------

    /*
     * Invariant: others' deletions take effect only once every event of their watch response was
     * delivered (eventsDelivered), our own at once. A prefix delete removes a waiter's entry and the
     * one ahead of it in one revision, whose events come one by one in key order: acting on the one
     * ahead first would make a waiter whose own entry is gone the holder, with a fence below that of
     * an entry written since.
     */
    @Override
    public void deleted(ByteSequence etcdKey, long revision) {
        if (etcdKey.equals(this.key)) {
            ownKeyDeleted(revision);
        }
        else {
            this.othersDeleted.add(new Deletion(etcdKey, revision));
        }
    }

    @Override
    public void eventsDelivered() {
        Deletion deletion;
        while ((deletion = this.othersDeleted.poll()) != null) {
            this.monitor.deleted(deletion.key(), deletion.revision());
        }
    }

    /** Another entry's key deleted at a revision, to take effect at the end of its watch response. */
    private record Deletion(ByteSequence key, long revision) {
    }

    /**
     * A key named like ours was deleted at {@code revision}. Keys are reused once their previous
     * entry is confirmed deleted, and that delete's event may arrive after we subscribed: only a
     * delete after our own write means our entry is gone.
     */
    private void ownKeyDeleted(long revision) {
        long written = this.createRevision;
        if (written == NOT_WRITTEN) {
            this.monitor.ownKeyDeletedBeforeWrite(revision);
            // The write may have landed meanwhile: decide with its revision (enqueue checks
            // the monitor itself if it lands later).
            written = this.createRevision;
        }
        if (written != NOT_WRITTEN && revision > written) {
            markLost(ENTRY_DELETED);
        }
    }

    @Override
    public void created(ByteSequence etcdKey, long createRevision) {
        if (etcdKey.equals(this.key)) {
            return;
        }
        this.newestSeen.accumulateAndGet(createRevision, Math::max);
        long written = this.createRevision;
        if (written != NOT_WRITTEN && createRevision > written) {
            this.queuedBehind.fire();
        }
    }

    /**
     * The watch delivers creations after our subscription, which precedes our write, so every
     * entry written behind ours is seen: at registration through {@link #newestSeen}, later
     * through {@link #created}.
     */
    @Override
    public boolean whenQueuedBehind(Runnable queuedBehind) {
        long written = this.createRevision;
        this.queuedBehind.register(queuedBehind, written != NOT_WRITTEN && this.newestSeen.get() > written);
        return true;
    }

    @Override
    public void resync() {
        // Creations may have been missed too: assume someone queued behind.
        this.newestSeen.set(Long.MAX_VALUE);
        this.queuedBehind.fire();
        if (this.monitor.resync()) {
            this.verifier.request();
        }
    }

    /** The session ended: the entry's key is gone with the lease (or soon will be). */
    void sessionEnded(String reason) {
        markLost(reason);
    }

    void markLost(String reason) {
        // A hold is reported lost once, however many ways its loss shows.
        if (this.monitor.markLost(reason)) {
            this.store.holdLost(this, reason);
        }
    }

    // ---- release and clean-up ------------------------------------------------------------------

    /**
     * Releases a held entry with a compare-and-delete.
     * @return false if the hold had been lost: reported before the release, or the entry already gone
     * @throws StoreUnavailableException if etcd did not answer; the delete is then retried in the
     * background
     */
    @Override
    public boolean release() throws StoreUnavailableException {
        if (!endHold()) {
            this.store.forget(this);
            // Reported lost already (its session's deadline passed, say): the unlock must say so too.
            this.store.cleanup().deleteUntilGone(this);
            return false;
        }
        try {
            boolean deleted;
            try {
                deleted = releaseWithRetries();
            }
            finally {
                // Registered until its delete was answered: the ghost sweep deletes keys of the lease that no
                // registered entry owns, and its delete landing first would make this release read as a loss.
                this.store.forget(this);
            }
            confirmedGone();
            if (!deleted && this.monitor.lostAtRelease(ENTRY_DELETED)) {
                // Gone before the unlock, and not reported while held: report it now, once.
                String reason = lostReason();
                this.store.holdLost(this, (reason != null) ? reason : ENTRY_DELETED);
            }
            return deleted;
        }
        catch (StoreUnavailableException ex) {
            this.store.failed();
            this.store.cleanup().deleteUntilGone(this);
            throw ex;
        }
    }

    /**
     * Sends the compare-and-delete in attempts of {@link EtcdLockStore#idempotentAttemptNanos()}
     * until one answers or the request timeout is over, so that a release sent to a member whose
     * leader just died does not wait out the whole request timeout. The compare makes a repeated
     * delete harmless. An attempt that got no answer may still have deleted the key, so a later
     * attempt that finds the key gone counts as the release, unless the entry is known to be lost.
     * @return whether the key was deleted by this release, {@code false} if it was gone before
     */
    private boolean releaseWithRetries() throws StoreUnavailableException {
        long deadline = System.nanoTime() + this.store.requestTimeoutNanos();
        // An attempt answering after its own time is up still counts, as for the entry's write.
        EtcdCalls.Attempts<TxnResponse> attempts = new EtcdCalls.Attempts<>();
        boolean unanswered = false;
        while (true) {
            long left = deadline - System.nanoTime();
            try {
                TxnResponse response = EtcdCalls.awaitUninterruptibly(attempts.send(compareAndDelete()),
                        Math.min(left, this.store.idempotentAttemptNanos()), "lock release");
                this.store.terms().observe(response);
                return response.isSucceeded() || (unanswered && lostReason() == null);
            }
            catch (StoreUnavailableException ex) {
                if (deadline - System.nanoTime() <= 0) {
                    throw new StoreUnavailableException("lock release got no answer within "
                            + TimeUnit.NANOSECONDS.toMillis(this.store.requestTimeoutNanos()) + " ms", ex);
                }
                unanswered = true;
            }
        }
    }

    /** Drops a lost hold: stops listening and deletes the key in the background in case it is still there. */
    @Override
    public void discard() {
        endHold();
        this.store.forget(this);
        this.store.cleanup().deleteUntilGone(this);
    }

    /**
     * Our own release or discard starts: stops listening. The entry stays among the session's
     * entries until the caller forgets it (a release only once its delete was answered).
     * @return whether no loss was recorded before (see {@link EntryMonitor#released()})
     */
    private boolean endHold() {
        boolean live = this.monitor.released();
        this.store.dispatcher().unsubscribe(this.root, this);
        return live;
    }

    /** Removes a waiting entry without blocking the caller; failures are retried in the background. */
    private void giveUp() {
        this.store.dispatcher().unsubscribe(this.root, this);
        // Unregistered only now that no write of ours can still be wanted: see SessionKeeper's invariant.
        this.store.forget(this);
        this.store.cleanup().giveUp(this, this.write);
    }

    boolean isWritten() {
        return this.createRevision != NOT_WRITTEN;
    }

    /** A write that had no answer when the acquisition gave up was applied at {@code revision}. */
    void writtenLate(long revision) {
        this.createRevision = revision;
    }

    /**
     * Deletes this entry's key if it is still the one we wrote. An entry whose write never got an
     * answer is deleted by key alone: entry keys are unique per acquisition, so no one else owns it.
     */
    CompletableFuture<TxnResponse> compareAndDelete() {
        long revision = this.createRevision;
        if (revision == NOT_WRITTEN) {
            return this.store.kv().txn().Then(Op.delete(this.key, DeleteOption.DEFAULT)).commit();
        }
        return deleteIfCreatedAt(this.store.kv(), this.key, revision);
    }

    /**
     * etcd answered a compare-and-delete of this entry: the key is gone. Its number may be reused,
     * unless the entry's write never got an answer or was sent twice (it could still appear).
     */
    void confirmedGone() {
        if (this.createRevision != NOT_WRITTEN && this.write == null && !this.sentTwice) {
            returnSlot();
        }
    }

    /** The session ended: its lease id is in this entry's key, so the number is free for later sessions. */
    void sessionOver() {
        returnSlot();
    }

    private void returnSlot() {
        if (this.slotReturned.compareAndSet(false, true)) {
            this.store.slots().giveBack(this.slot);
        }
    }

    String describeKey() {
        return EtcdKeyspace.text(this.key);
    }
}
