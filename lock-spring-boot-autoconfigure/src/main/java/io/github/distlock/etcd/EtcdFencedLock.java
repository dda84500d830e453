package io.github.distlock.etcd;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.distlock.FencedLock;

/** A handle on one key of an {@link EtcdLockRegistry}; all state lives in the registry. */
final class EtcdFencedLock implements FencedLock {

    private final EtcdLockRegistry registry;

    private final String key;

    private final boolean fair;

    private volatile String lastSeenHolder;

    EtcdFencedLock(EtcdLockRegistry registry, String key, boolean fair) {
        this.registry = registry;
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
        try {
            this.registry.acquire(this, 0, false, false);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("uninterruptible acquisition was interrupted", ex);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        this.registry.acquire(this, 0, false, true);
    }

    @Override
    public boolean tryLock() {
        try {
            return this.registry.acquire(this, 0, true, false);
        }
        catch (InterruptedException ex) {
            throw new IllegalStateException("uninterruptible acquisition was interrupted", ex);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return this.registry.acquire(this, Math.max(0, unit.toNanos(time)), true, true);
    }

    @Override
    public void unlock() {
        this.registry.release(this.key);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Distributed locks do not support conditions (lock '" + this.key + "')");
    }

    @Override
    public long getFence() {
        return this.registry.fence(this.key);
    }

    @Override
    public boolean isLockedByCurrentThread() {
        return this.registry.isHeldByCurrentThread(this.key);
    }

    @Override
    public int getHoldCount() {
        return this.registry.holdCount(this.key);
    }

    @Override
    public boolean isLocked() {
        return this.registry.isLocked(this.key);
    }

    @Override
    public String getHolder() {
        return this.registry.holder(this.key);
    }

    @Override
    public String getLastSeenHolder() {
        return this.lastSeenHolder;
    }

    /** An acquisition through this object gave up while {@code holder} was ahead of it. */
    void missed(String holder) {
        this.lastSeenHolder = holder;
    }

    @Override
    public String toString() {
        return "EtcdFencedLock[key=" + this.key + ", fair=" + this.fair + "]";
    }
}
