package io.github.distlock.store;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The life of a {@link StoreEntry} that every store keeps the same way: NEW until written, WAITING
 * behind an older entry, HOLDING, ENDED (released, given up or discarded), and a loss that can
 * strike at any point. Stores add how an entry is written, waits and is removed.
 *
 * <p>Invariants, kept under {@link #lock}: the state only moves forward (a give-up goes from
 * WAITING to ENDED); the lost reason is set once, and after ENDED only by the release that ended
 * the entry and found it already gone ({@link #lostAtRelease}); a loss is reported (to
 * {@link #holdLost}) only if it struck in HOLDING or at that release, so a lost hold is reported
 * exactly once and an entry lost before it held makes {@link #markHoldingLocked()} throw instead of
 * letting {@code acquire} return true. Every change signals {@link #changed}, which waiters wait on.
 */
public abstract class AbstractStoreEntry implements StoreEntry {

    private enum State { NEW, WAITING, HOLDING, ENDED }

    /** Guards the state, the lost reason and what subclasses wait on. */
    protected final ReentrantLock lock = new ReentrantLock();

    /** Signalled on every change of the state, the lost reason or subclass state guarded by {@link #lock}. */
    protected final Condition changed = this.lock.newCondition();

    private final String key;

    private State state = State.NEW;

    private volatile @Nullable String lostReason;

    private boolean lostWithSession;

    /** @param key the lock key */
    protected AbstractStoreEntry(String key) {
        this.key = key;
    }

    @Override
    public String lockKey() {
        return this.key;
    }

    /** Stops routing store events to this entry: called once it ended or was lost, under {@link #lock}. */
    protected abstract void untrack();

    /**
     * Tells the store's {@link HoldLossListener} that this held entry was lost; called outside {@link #lock}.
     * @param reason why
     */
    protected abstract void holdLost(String reason);

    /** The entry is written and waits behind an older one (unless something already moved it on). */
    protected final void markWaiting() {
        this.lock.lock();
        try {
            if (this.state == State.NEW) {
                this.state = State.WAITING;
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * The entry owns its key, unless it was lost: call under {@link #lock}, after any last check.
     * @throws EntryLostException if it was lost
     */
    protected final void markHoldingLocked() throws EntryLostException {
        if (this.lostReason != null) {
            throw gone();
        }
        this.state = State.HOLDING;
    }

    /**
     * The entry ended without its release.
     * @param reason why
     * @param withSession whether its session ended (the store failing) rather than the entry being deleted
     */
    public final void lose(String reason, boolean withSession) {
        boolean wasHolding;
        this.lock.lock();
        try {
            wasHolding = loseLocked(reason, withSession);
        }
        finally {
            this.lock.unlock();
        }
        if (wasHolding) {
            holdLost(reason);
        }
    }

    /**
     * @return whether the entry held, so that the loss must be reported (by the caller, outside the lock)
     */
    protected final boolean loseLocked(String reason, boolean withSession) {
        if (this.lostReason != null || this.state == State.ENDED) {
            return false;
        }
        this.lostReason = reason;
        this.lostWithSession = withSession;
        this.changed.signalAll();
        untrack();
        return this.state == State.HOLDING;
    }

    /**
     * A release found the entry already gone: the hold was lost, and is reported now.
     * @param reason why
     */
    protected final void lostAtRelease(String reason) {
        signal(() -> this.lostReason = reason);
        holdLost(reason);
    }

    /** @return whether the entry was live (not ended, not lost) until this call */
    protected final boolean end() {
        this.lock.lock();
        try {
            boolean live = this.state != State.ENDED && this.lostReason == null;
            this.state = State.ENDED;
            untrack();
            return live;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return what {@code acquire} throws for an entry that vanished before it held */
    protected final EntryLostException gone() {
        String reason = this.lostReason;
        return new EntryLostException((reason != null) ? reason : "its lock entry was lost", this.lostWithSession);
    }

    /** @return whether the entry was lost (without the checks a subclass adds to {@link #lostReason()}) */
    protected final boolean isLost() {
        return this.lostReason != null;
    }

    /** Applies {@code change} to state guarded by {@link #lock} and wakes the waiting thread. */
    protected final void signal(Runnable change) {
        this.lock.lock();
        try {
            change.run();
            this.changed.signalAll();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Why the entry's session ended, if it did: a store ends a session and then tells its entries
     * one after another, so an entry may not have been told yet.
     * @return the session's lost reason, or {@code null} while it lives
     */
    protected abstract @Nullable String sessionLostReason();

    /**
     * Also takes the loss of the entry's session before the session's turn comes to tell it: a
     * hold must not read as held meanwhile, and the loss goes through {@link #lose} so it is
     * reported exactly once, even if the entry ends (an unlock) before the session tells it.
     */
    @Override
    public @Nullable String lostReason() {
        String lost = this.lostReason;
        if (lost == null) {
            String sessionLost = sessionLostReason();
            if (sessionLost != null) {
                lose(sessionLost, true);
                lost = this.lostReason;
            }
        }
        return lost;
    }

    @Override
    public boolean isWaiting() {
        this.lock.lock();
        try {
            return this.state == State.WAITING && this.lostReason == null;
        }
        finally {
            this.lock.unlock();
        }
    }

    @Override
    public boolean isHolding() {
        this.lock.lock();
        try {
            return this.state == State.HOLDING;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return whether the entry ended (released, given up or discarded) */
    protected final boolean isEnded() {
        this.lock.lock();
        try {
            return this.state == State.ENDED;
        }
        finally {
            this.lock.unlock();
        }
    }
}
