package io.github.distlock.aop;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.github.distlock.FencedLock;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;

/**
 * An {@link InMemoryLockRegistry} that records what is done with its locks in a journal shared
 * with other recorders (such as a transaction manager), and can make a hold lost: after
 * {@link #loseHoldOf(String)}, unlocking that key releases it and then throws
 * {@link LockLostException}, and reentering it throws, as the etcd registry does for a hold
 * whose lease expired. After {@link #failAcquisitions(String)}, timed acquisitions throw
 * {@link LockAcquisitionException} as a store that cannot be reached does, until
 * {@link #recover()}.
 */
public class RecordingLockRegistry implements LockRegistry {

    private final InMemoryLockRegistry delegate = new InMemoryLockRegistry();

    private final List<String> journal;

    private final List<Duration> waits = new CopyOnWriteArrayList<>();

    private final Set<String> lostKeys = ConcurrentHashMap.newKeySet();

    private volatile String storeFailure;

    private volatile boolean holderReadsStall;

    public RecordingLockRegistry() {
        this(new CopyOnWriteArrayList<>());
    }

    public RecordingLockRegistry(List<String> journal) {
        this.journal = journal;
    }

    @Override
    public FencedLock obtain(String key) {
        return obtain(key, false);
    }

    @Override
    public FencedLock obtain(String key, boolean fair) {
        this.journal.add("obtain " + key + (fair ? " fair" : " unfair"));
        return new RecordingLock(this.delegate.obtain(key, fair));
    }

    /** @return what was done, in order: obtain, wait, acquire, release and lost entries */
    public List<String> journal() {
        return this.journal;
    }

    /** @return the timeout of every timed acquisition, in order */
    public List<Duration> waits() {
        return this.waits;
    }

    /** Makes the current hold of {@code key} lost: its unlocks throw until it is fully released. */
    public void loseHoldOf(String key) {
        this.lostKeys.add(key);
    }

    /** Makes every timed acquisition fail with {@code failure}, until {@link #recover()}. */
    public void failAcquisitions(String failure) {
        this.storeFailure = failure;
    }

    /**
     * Makes {@link FencedLock#getHolder()} block for a minute, as a read from a stalled store
     * would, and journal {@code read holder <key>}.
     */
    public void stallHolderReads() {
        this.holderReadsStall = true;
    }

    /** Ends what {@link #failAcquisitions(String)} started. */
    public void recover() {
        this.storeFailure = null;
    }

    /** @return whether anyone holds {@code key} */
    public boolean isLocked(String key) {
        return this.delegate.obtain(key).isLocked();
    }

    private final class RecordingLock implements FencedLock {

        private final FencedLock lock;

        RecordingLock(FencedLock lock) {
            this.lock = lock;
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            if (RecordingLockRegistry.this.lostKeys.contains(getKey()) && this.lock.isLockedByCurrentThread()) {
                throw new LockLostException(getKey(), this.lock.getFence(), "lease expired (test); unlock first");
            }
            Duration wait = Duration.ofNanos(unit.toNanos(time));
            RecordingLockRegistry.this.waits.add(wait);
            RecordingLockRegistry.this.journal.add("wait " + getKey());
            String failure = RecordingLockRegistry.this.storeFailure;
            if (failure != null) {
                RecordingLockRegistry.this.journal.add("fail " + getKey());
                throw new LockAcquisitionException(getKey(), wait, null, failure,
                        new IllegalStateException("connection refused (test)"));
            }
            boolean acquired = this.lock.tryLock(time, unit);
            RecordingLockRegistry.this.journal.add((acquired ? "acquire " : "timeout ") + getKey());
            return acquired;
        }

        @Override
        public void unlock() {
            long fence = this.lock.getFence();
            this.lock.unlock();
            boolean released = !this.lock.isLockedByCurrentThread();
            RecordingLockRegistry.this.journal.add((released ? "release " : "unlock ") + getKey());
            if (RecordingLockRegistry.this.lostKeys.contains(getKey())) {
                if (released) {
                    RecordingLockRegistry.this.lostKeys.remove(getKey());
                }
                throw new LockLostException(getKey(), fence, "lease expired (test)");
            }
        }

        @Override
        public void lock() {
            this.lock.lock();
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            this.lock.lockInterruptibly();
        }

        @Override
        public boolean tryLock() {
            return this.lock.tryLock();
        }

        @Override
        public Condition newCondition() {
            return this.lock.newCondition();
        }

        @Override
        public String getKey() {
            return this.lock.getKey();
        }

        @Override
        public boolean isFair() {
            return this.lock.isFair();
        }

        @Override
        public long getFence() {
            return this.lock.getFence();
        }

        @Override
        public boolean isLockedByCurrentThread() {
            return this.lock.isLockedByCurrentThread();
        }

        @Override
        public int getHoldCount() {
            return this.lock.getHoldCount();
        }

        @Override
        public boolean isLocked() {
            return this.lock.isLocked();
        }

        @Override
        public String getHolder() {
            if (RecordingLockRegistry.this.holderReadsStall) {
                RecordingLockRegistry.this.journal.add("read holder " + getKey());
                try {
                    TimeUnit.MINUTES.sleep(1);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            return this.lock.getHolder();
        }

        @Override
        public String getLastSeenHolder() {
            return this.lock.getLastSeenHolder();
        }
    }
}
