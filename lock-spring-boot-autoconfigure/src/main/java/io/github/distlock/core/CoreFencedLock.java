package io.github.distlock.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.distlock.FencedLock;
import io.github.distlock.store.Wait;
import org.jspecify.annotations.Nullable;

/** A handle on one key of a {@link LockCore}: all state lives in the core. */
final class CoreFencedLock implements FencedLock {

    private final LockCore core;

    private final String key;

    private final boolean fair;

    private volatile @Nullable String lastSeenHolder;

    CoreFencedLock(LockCore core, String key, boolean fair) {
        this.core = core;
        this.key = key;
        this.fair = fair;
    }

    @Override
    public String getKey() {
        return this.key;
    }

    @Override
    public boolean isFair() {
        return this.fair;
    }

    @Override
    public void lock() {
        acquireUninterruptibly(Wait.untimed(false));
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        this.core.acquire(this, Wait.untimed(true));
    }

    @Override
    public boolean tryLock() {
        return acquireUninterruptibly(Wait.timeout(0, false));
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return this.core.acquire(this, Wait.timeout(unit.toNanos(time), true));
    }

    private boolean acquireUninterruptibly(Wait wait) {
        try {
            return this.core.acquire(this, wait);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("uninterruptible acquisition was interrupted", ex);
        }
    }

    @Override
    public void unlock() {
        this.core.release(this.key);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Distributed locks do not support conditions (lock '" + this.key + "')");
    }

    @Override
    public long getFence() {
        return this.core.fence(this.key);
    }

    @Override
    public boolean isLockedByCurrentThread() {
        return this.core.isHeldByCurrentThread(this.key);
    }

    @Override
    public int getHoldCount() {
        return this.core.holdCount(this.key);
    }

    @Override
    public boolean isLocked() {
        return this.core.isLocked(this.key);
    }

    @Override
    public @Nullable String getHolder() {
        return this.core.holder(this.key);
    }

    @Override
    public @Nullable String getLastSeenHolder() {
        return this.lastSeenHolder;
    }

    /** An acquisition through this object gave up while {@code holder} was ahead of it. */
    void missed(@Nullable String holder) {
        this.lastSeenHolder = holder;
    }

    @Override
    public String toString() {
        return "FencedLock[key=" + this.key + ", fair=" + this.fair + "]";
    }
}
