package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.github.distlock.store.AbstractStoreEntry;
import io.github.distlock.store.EntryLostException;
import io.github.distlock.store.EntryValue;
import io.github.distlock.store.LockKeys;
import io.github.distlock.store.QueuedBehindSignal;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition's entry: an ephemeral sequential node of the registry's session under the lock's
 * container node, created with Curator's protection (so a create whose answer was lost is found,
 * not duplicated). It holds when it is the oldest entry (see {@link ZookeeperKeyspace} for how
 * names tell the age); a waiter watches only its predecessor; a holder watches its own node, so that its deletion by someone else is reported,
 * and the lock node's children, so that it learns when another entry queues behind it.
 *
 * <p>Invariants: those of {@link AbstractStoreEntry}; a node whose create was answered after the
 * entry gave up is deleted.
 */
final class ZookeeperEntry extends AbstractStoreEntry {

    private static final Logger logger = LoggerFactory.getLogger(ZookeeperEntry.class);

    private static final long FAILED_READ_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private static final long MIN_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final long OWN_NODE_WATCH_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ZookeeperLockStore store;

    private final ZookeeperSession session;

    /** The lock's container node: the key escaped once, not on every read of the queue. */
    private final String lockNode;

    private final byte[] value;

    private volatile @Nullable String path;

    private volatile long fence;

    private volatile @Nullable String ahead;

    /** The watch on the entry ahead and its node (see {@link #watchAhead}); touched by the acquiring thread only. */
    private @Nullable Watcher aheadWatch;

    private @Nullable String aheadWatchPath;

    private boolean aheadWatchOnHead;

    /** A watch fired (the predecessor changed or the connection did): read the queue again. */
    private boolean recheck;

    /** The head of the queue, just ahead of this entry, was deleted: this entry holds. */
    private boolean headDeleted;

    /** Told once when an entry is queued behind this one; see {@link #whenQueuedBehind}. */
    private final QueuedBehindSignal queuedBehind = new QueuedBehindSignal();

    /** The children watch of the first read of the queue, sent with the create. */
    private final QueueWatch firstReadWatch = new QueueWatch();

    ZookeeperEntry(ZookeeperLockStore store, ZookeeperSession session, String key, byte[] value) {
        super(key);
        this.store = store;
        this.session = session;
        this.lockNode = store.keyspace().lockNode(key);
        this.value = value;
    }

    @Nullable String path() {
        return this.path;
    }

    @Override
    public boolean acquire(Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        this.session.entries.add(this);
        String sessionLost = this.session.lostReason();
        if (sessionLost != null) {
            lose(sessionLost, true);
            end();
            throw gone();
        }
        Stat stat = new Stat();
        CompletableFuture<CuratorEvent> create = this.store.createEntry(lockKey(), this.value, stat);
        // Sent right behind the create on the same session, so ZooKeeper answers it after applying the create:
        // an uncontended acquisition learns that it holds without another round trip.
        CompletableFuture<CuratorEvent> firstRead = readQueueWatched(this.firstReadWatch, () -> {
            CuratorEvent answered = create.getNow(null);
            return (answered != null) ? answered.getName() : null;
        });
        CuratorEvent created;
        try {
            created = this.store.await(create, attempt.atMost(this.store.requestTimeoutNanos()), "Creating the lock entry");
        }
        catch (StoreUnavailableException | InterruptedException ex) {
            // The create may still succeed: whatever it creates is deleted then.
            end();
            this.store.createUnanswered(lockKey());
            create.thenAccept(late -> {
                if (late.getResultCode() == KeeperException.Code.OK.intValue() && late.getName() != null) {
                    this.store.deleteGuaranteed(lockKey(), late.getName());
                }
            });
            throw ex;
        }
        this.path = created.getName();
        Stat createdStat = (created.getStat() != null) ? created.getStat() : stat;
        long czxid = createdStat.getCzxid();
        if (czxid == 0) {
            // Curator found a protected node after a connection loss and did not fill the stat: read it.
            czxid = readCzxid(created.getName(), attempt);
        }
        this.fence = czxid;
        markWaiting();
        boolean owned = false;
        try {
            owned = awaitTurn(wait, attempt, firstRead);
            return owned;
        }
        finally {
            if (!owned) {
                end();
                String created2 = this.path;
                if (created2 != null) {
                    this.store.deleteBeforeReturning(lockKey(), created2, attempt);
                }
            }
        }
    }

    /**
     * @param attempt bounds the first read of the queue, which a try-once (a wait already over)
     * still makes, so that it learns whether it holds and who is ahead
     */
    /** @return the creation zxid of the entry's node, read from ZooKeeper */
    private long readCzxid(String createdPath, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException {
        try {
            CuratorEvent exists = this.store.await(this.store.background(callback -> this.store.client().checkExists()
                .inBackground(callback).forPath(createdPath)), attempt.atMost(this.store.requestTimeoutNanos()),
                    "Reading the lock entry", KeeperException.Code.NONODE);
            if (exists.getStat() == null || exists.getStat().getCzxid() == 0) {
                lose("its lock entry node was gone from ZooKeeper right after it was created", false);
                throw gone();
            }
            return exists.getStat().getCzxid();
        }
        catch (StoreUnavailableException | InterruptedException | EntryLostException ex) {
            end();
            this.store.deleteGuaranteed(lockKey(), createdPath);
            throw ex;
        }
    }

    private CompletableFuture<CuratorEvent> readQueue() {
        return this.store.background(callback -> this.store.client().getChildren().inBackground(callback)
            .forPath(this.lockNode));
    }

    /**
     * Reads the queue and leaves a children watch on it, which counts if the read shows this entry
     * as the head: any later change of the children is then behind this entry.
     * @param ownPath this entry's path as far as known when the answer comes, or {@code null}
     */
    private CompletableFuture<CuratorEvent> readQueueWatched(QueueWatch watch,
            Supplier<@Nullable String> ownPath) {
        return this.store.background(callback -> this.store.client().getChildren().usingWatcher(watch)
            .inBackground((client, event) -> {
                // On ZooKeeper's event thread, which delivers this watch's events only after this answer.
                watch.answered(event, ownPath.get());
                callback.processResult(client, event);
            }).forPath(this.lockNode));
    }

    /**
     * A one-shot children watch on the lock node. ZooKeeper delivers the answer of the read that
     * set it before any of its events, on one thread: the answer decides whether events count.
     */
    private final class QueueWatch implements Watcher {

        private volatile boolean entryWasHead;

        void answered(CuratorEvent event, @Nullable String ownPath) {
            if (event.getResultCode() != KeeperException.Code.OK.intValue() || ownPath == null) {
                return;
            }
            List<String> queue = ZookeeperLockStore.sortedEntries(event.getChildren());
            String own = nameOf(ownPath);
            // Where no entry is ordered by sequence, only creation zxids, which this thread must not wait for, order
            // them: the entry counts as the head then, which at worst tells a holder of a waiter that is not there
            // (it then gives the key back rather than keep it).
            boolean head = !queue.isEmpty()
                    && (queue.get(0).equals(own) || !ZookeeperKeyspace.isOrderedBySequence(queue.get(0)));
            if (head && queue.contains(own)) {
                this.entryWasHead = true;
                if (queue.size() > 1) {
                    ZookeeperEntry.this.queuedBehind.fire();
                }
            }
        }

        @Override
        public void process(WatchedEvent event) {
            // A child created or deleted behind the head, or a connection event: either may hide an entry queued.
            if (this.entryWasHead) {
                ZookeeperEntry.this.queuedBehind.fire();
            }
        }
    }

    /**
     * Entries queued behind this one are told by a children watch that counts from a read showing
     * this entry as the head: the read sent with the create, if it showed that, else a read sent
     * now (the entry took the key after waiting; entries already behind it show in the answer).
     * Connection events count as an entry queued: changes may have been missed.
     */
    @Override
    public boolean whenQueuedBehind(Runnable queuedBehind) {
        this.queuedBehind.register(queuedBehind, false);
        String own = this.path;
        if (!this.firstReadWatch.entryWasHead && own != null) {
            readQueueWatched(new QueueWatch(), () -> own).whenComplete((event, failure) -> {
                if (failure != null || event.getResultCode() != KeeperException.Code.OK.intValue()) {
                    // Cannot tell: assume someone waits.
                    this.queuedBehind.fire();
                }
            });
        }
        return true;
    }

    /**
     * @param pipelinedRead a read of the queue sent right after the create: used if it shows the
     * entry (it misses it when Curator had to create the lock node first, or retried the create)
     */
    private boolean awaitTurn(Wait wait, Wait attempt, CompletableFuture<CuratorEvent> pipelinedRead)
            throws EntryLostException, InterruptedException {
        try {
            return awaitTurnWatching(wait, attempt, pipelinedRead);
        }
        finally {
            removeAheadWatch();
        }
    }

    /**
     * Invariant: at most one watch of this entry is registered at a time, and none once it stops
     * waiting. A watch stays in the client until its node changes: one left per attempt on a
     * holder that keeps the key for days (a leader, tried every few milliseconds by its followers)
     * would keep every ended entry reachable, without bound.
     */
    private Watcher watchAhead(String predecessor, boolean predecessorIsHead) {
        Watcher current = this.aheadWatch;
        if (current != null && predecessor.equals(this.aheadWatchPath) && predecessorIsHead == this.aheadWatchOnHead) {
            // The same watcher again: the client keeps one registration of it on that node.
            return current;
        }
        removeAheadWatch();
        Watcher watcher = event -> watchFired(event, predecessorIsHead);
        this.aheadWatch = watcher;
        this.aheadWatchPath = predecessor;
        this.aheadWatchOnHead = predecessorIsHead;
        return watcher;
    }

    private void removeAheadWatch() {
        Watcher watcher = this.aheadWatch;
        String watched = this.aheadWatchPath;
        this.aheadWatch = null;
        this.aheadWatchPath = null;
        if (watcher == null || watched == null) {
            return;
        }
        try {
            // Locally: removed from the client even without a connection; quietly: it may have fired already.
            this.store.client().watches().remove(watcher).ofType(Watcher.WatcherType.Data).locally().quietly()
                .inBackground().forPath(watched);
        }
        catch (Exception ex) {
            logger.debug("Could not remove the watch on {}: {}", LockKeys.abbreviate(watched), ex.toString());
        }
    }

    private boolean awaitTurnWatching(Wait wait, Wait attempt, CompletableFuture<CuratorEvent> pipelinedRead)
            throws EntryLostException, InterruptedException {
        String lockNode = this.lockNode;
        String own = nameOf(this.path);
        @Nullable CompletableFuture<CuratorEvent> pipelined = pipelinedRead;
        boolean first = true;
        while (true) {
            throwIfLost();
            Wait bound = (first ? attempt : wait).atMost(this.store.requestTimeoutNanos());
            first = false;
            List<String> queue;
            try {
                boolean wasPipelined = pipelined != null;
                CompletableFuture<CuratorEvent> read = (pipelined != null) ? pipelined : readQueue();
                pipelined = null;
                queue = ZookeeperLockStore.sortedEntries(this.store.await(read, bound, "Reading the lock queue",
                        KeeperException.Code.NONODE).getChildren());
                if (wasPipelined && !queue.contains(own)) {
                    queue = ZookeeperLockStore.sortedEntries(this.store.await(readQueue(), bound,
                            "Reading the lock queue", KeeperException.Code.NONODE).getChildren());
                }
                this.store.sweepOrphans(lockKey(), lockNode, queue);
                if (queue.contains(own)) {
                    queue = this.store.inQueueOrder(lockNode, queue, own, this.fence, bound);
                }
            }
            catch (StoreUnavailableException ex) {
                this.store.failed(ex);
                if (wait.isOver()) {
                    return false;
                }
                wait.pause(FAILED_READ_PAUSE_NANOS);
                continue;
            }
            int index = queue.indexOf(own);
            if (index < 0) {
                lose("its lock entry node was gone from ZooKeeper while it waited", false);
                throw gone();
            }
            if (index == 0) {
                return becomeHolder(lockNode + "/" + own);
            }
            String predecessor = lockNode + "/" + queue.get(index - 1);
            // Invariant: no entry is ever created below an existing one, and the lock node cannot go while this
            // entry is in it, so once the head just ahead of this entry is deleted, this entry is the head: the
            // handoff needs no second read of the queue.
            boolean predecessorIsHead = index == 1;
            Watcher watcher = watchAhead(predecessor, predecessorIsHead);
            CuratorEvent before;
            try {
                before = this.store.await(this.store.background(callback -> this.store.client().getData()
                    .usingWatcher(watcher).inBackground(callback).forPath(predecessor)), bound,
                        "Watching the entry ahead", KeeperException.Code.NONODE);
            }
            catch (StoreUnavailableException ex) {
                this.store.failed(ex);
                if (wait.isOver()) {
                    return false;
                }
                wait.pause(FAILED_READ_PAUSE_NANOS);
                continue;
            }
            if (before.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                if (predecessorIsHead) {
                    return becomeHolder(lockNode + "/" + own);
                }
                continue;
            }
            if (before.getData() != null) {
                this.ahead = EntryValue.decode(new String(before.getData(), StandardCharsets.UTF_8)).describe();
            }
            if (!awaitChange(wait)) {
                return false;
            }
            if (takeHeadDeleted()) {
                return becomeHolder(lockNode + "/" + own);
            }
        }
    }

    private void watchFired(WatchedEvent event, boolean onHead) {
        this.lock.lock();
        try {
            if (onHead && event.getType() == Watcher.Event.EventType.NodeDeleted) {
                this.headDeleted = true;
            }
            this.recheck = true;
            this.changed.signalAll();
        }
        finally {
            this.lock.unlock();
        }
    }

    private boolean takeHeadDeleted() {
        this.lock.lock();
        try {
            boolean deleted = this.headDeleted;
            this.headDeleted = false;
            return deleted;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * @return false if the wait is over; true once a watch fired, the entry was lost, or the
     * recheck interval passed (a safety net: a watch can be lost when the client moves between
     * servers)
     */
    private boolean awaitChange(Wait wait) throws InterruptedException {
        long recheckAt = System.nanoTime() + Math.max(MIN_RECHECK_NANOS,
                TimeUnit.MILLISECONDS.toNanos(this.session.timeoutMillis) / 2);
        return wait.block(remaining -> {
            long deadline = System.nanoTime() + Math.min(remaining, Long.MAX_VALUE / 4);
            this.lock.lock();
            try {
                while (!this.recheck && !isLost()) {
                    long now = System.nanoTime();
                    if (deadline - now <= 0) {
                        return false;
                    }
                    if (recheckAt - now <= 0) {
                        return true;
                    }
                    this.changed.awaitNanos(Math.min(deadline - now, recheckAt - now));
                }
                this.recheck = false;
                return true;
            }
            finally {
                this.lock.unlock();
            }
        });
    }

    private boolean becomeHolder(String ownPath) throws EntryLostException {
        // Invariant: an entry takes the key only while its session is the client's and not lost. A loss
        // may not have reached this entry yet, and a read Curator answered on a newer session (it retries
        // across an expiry) says nothing of this entry's node, which died with its session.
        if (!this.store.isStillServing(this.session)) {
            String reason = this.session.lostReason();
            lose((reason != null) ? reason : "its ZooKeeper session " + this.session.describe() + " was replaced",
                    true);
            throw gone();
        }
        this.lock.lock();
        try {
            markHoldingLocked();
        }
        finally {
            this.lock.unlock();
        }
        // Not at once: the watch would delay a short hold's release by a round trip; a short hold learns it at release.
        this.store.runLater(OWN_NODE_WATCH_DELAY_NANOS, () -> {
            if (isHolding()) {
                watchOwnNode(ownPath);
            }
        });
        return true;
    }

    /**
     * A holder learns of its node's deletion (by an operator, say) from a watch on it, set
     * {@link #OWN_NODE_WATCH_DELAY_NANOS} into the hold. A placement that failed (Curator gave up
     * on it after a connection loss, or the call could not start) is made again once the client is
     * connected: without the watch, a deletion would be noticed only at the release.
     */
    private void watchOwnNode(String ownPath) {
        this.store.background(callback -> this.store.client().checkExists().usingWatcher((Watcher) event -> {
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
                lose("its lock entry node was deleted from ZooKeeper", false);
            }
            else if (event.getType() != Watcher.Event.EventType.None && isHolding()) {
                watchOwnNode(ownPath);
            }
        }).inBackground(callback).forPath(ownPath)).whenComplete((event, failure) -> {
            int code = (failure == null) ? event.getResultCode() : KeeperException.Code.SYSTEMERROR.intValue();
            if (code == KeeperException.Code.NONODE.intValue()) {
                lose("its lock entry node was gone from ZooKeeper", false);
            }
            else if (code != KeeperException.Code.OK.intValue()) {
                logger.debug("Could not watch the lock entry node {} ({}); watching it once connected",
                        LockKeys.abbreviate(ownPath), (failure != null) ? failure.toString() : KeeperException.Code.get(code));
                this.store.whenConnected(() -> {
                    if (isHolding() && !isLost()) {
                        watchOwnNode(ownPath);
                    }
                });
            }
        });
    }

    private void throwIfLost() throws EntryLostException {
        if (isLost()) {
            throw gone();
        }
    }

    @Override
    protected void untrack() {
        this.session.entries.remove(this);
    }

    @Override
    protected void holdLost(String reason) {
        this.store.holdLost(this, reason);
    }

    @Override
    public boolean release() throws StoreUnavailableException {
        String own = this.path;
        if (!end() || own == null) {
            if (own != null) {
                this.store.deleteGuaranteed(lockKey(), own);
            }
            return false;
        }
        long changesAtSend = this.store.connectionChanges();
        CuratorEvent deleted;
        try {
            deleted = this.store.await(this.store.deleteGuaranteed(lockKey(), own), Wait.timeout(this.store.requestTimeoutNanos(),
                    false), "Releasing the lock entry", KeeperException.Code.NONODE);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("An uninterruptible wait was interrupted", ex);
        }
        if (deleted.getResultCode() == KeeperException.Code.OK.intValue()) {
            return true;
        }
        if (this.store.connectionChanges() != changesAtSend && this.store.isStillServing(this.session)) {
            // Curator resends a delete whose answer a connection loss took: the resend finds its own work done.
            // The session lived on, so nothing but that delete removed the node.
            return true;
        }
        lostAtRelease("its lock entry node was already gone from ZooKeeper at release");
        return false;
    }

    @Override
    public void discard() {
        end();
        String own = this.path;
        if (own != null) {
            this.store.deleteGuaranteed(lockKey(), own);
        }
    }

    private static String nameOf(@Nullable String path) {
        if (path == null) {
            throw new IllegalStateException("The entry has no node yet");
        }
        return path.substring(path.lastIndexOf('/') + 1);
    }

    @Override
    public long fence() {
        return this.fence;
    }

    @Override
    public @Nullable String ahead() {
        return this.ahead;
    }

    /** Also notices a session whose contact deadline passed before any other thread did (after a pause). */
    @Override
    public @Nullable String lostReason() {
        String lost = super.lostReason();
        if (lost == null && this.store.checkContact(this.session)) {
            lost = super.lostReason();
        }
        return lost;
    }

    @Override
    protected @Nullable String sessionLostReason() {
        return this.session.lostReason();
    }

}
