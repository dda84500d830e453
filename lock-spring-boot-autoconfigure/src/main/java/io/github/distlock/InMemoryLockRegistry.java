package io.github.distlock;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link LockRegistry} whose locks live in this JVM only: the same semantics as the etcd
 * registry, for tests and single-instance applications.
 *
 * <p>Semantics:
 * <ul>
 * <li>One lock per key: every {@link FencedLock} this registry hands out for a key, fair or
 * unfair, excludes every other, and lock objects obtained at different times are
 * interchangeable (a hold taken through one can be re-entered and released through another).</li>
 * <li>Fair acquisitions wait in arrival order. Unfair ones first try to take a free lock ahead of
 * queued waiters, then queue in arrival order too. As with a fair
 * {@link ReentrantLock}, {@link FencedLock#tryLock() tryLock()} takes a free lock even on a fair
 * lock object, while {@code tryLock(0, unit)} on a fair lock object honours the queue.</li>
 * <li>Every acquisition gets a fence from a registry-wide counter, so fences increase strictly per
 * key (and across keys); reentrant holds keep the fence of the outermost hold.</li>
 * <li>Interrupts behave as on {@link ReentrantLock}: {@code lockInterruptibly()} and
 * {@code tryLock(time, unit)} throw {@link InterruptedException}, also when the interrupt is
 * pending on entry; {@code lock()} keeps waiting and leaves the interrupt status set.</li>
 * </ul>
 *
 * <p>Limits: locks exclude only threads of this JVM that use this registry instance. There is no
 * lease, so a hold lasts until it is unlocked: it is never lost, {@link LockLostException} is
 * never thrown, and a thread that dies while holding a lock blocks its key for good. Conditions
 * are not supported. State is kept only for keys that are held or waited for.
 */
public final class InMemoryLockRegistry implements LockRegistry {

    /*
     * Invariant: a key is mapped to a KeyState exactly while its users count is positive, and
     * users counts the threads that hold the key or wait for it (a reentrant hold counts once).
     * users changes only inside compute calls on this map, which serialise per key, so a state is
     * removed only when nobody holds or waits for it, and every thread that holds or waits for a
     * key uses the state mapped at that moment: two threads never use different ReentrantLocks
     * for one key at the same time.
     */
    private final ConcurrentMap<String, KeyState> states = new ConcurrentHashMap<>();

    // Registry-wide rather than per key, so fences keep increasing after a key's state is removed.
    private final AtomicLong fences = new AtomicLong();

    @Override
    public FencedLock obtain(String key) {
        return obtain(key, false);
    }

    @Override
    public FencedLock obtain(String key, boolean fair) {
        if (key == null) {
            throw new IllegalArgumentException("Lock key must not be null");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("Lock key must not be empty");
        }
        return new InMemoryFencedLock(key, fair);
    }

    /**
     * How many threads are waiting to acquire {@code key}; an estimate while threads come and go.
     * @param key the lock key
     * @return the number of queued threads
     */
    int getQueueLength(String key) {
        KeyState state = this.states.get(key);
        return (state != null) ? state.lock.getQueueLength() : 0;
    }

    /** @return how many keys are currently held or waited for, that is how many states are kept */
    int size() {
        return this.states.size();
    }

    private <E extends Exception> boolean acquire(String key, Acquisition<E> acquisition) throws E {
        KeyState held = this.states.get(key);
        if (held != null && held.lock.isHeldByCurrentThread()) {
            // The outer hold keeps this state mapped, so reentry needs no reference of its own.
            return acquisition.acquire(held.lock);
        }
        KeyState state = this.states.compute(key, (k, current) -> {
            KeyState joined = (current != null) ? current : new KeyState();
            joined.users++;
            return joined;
        });
        boolean acquired = false;
        try {
            acquired = acquisition.acquire(state.lock);
        }
        finally {
            if (!acquired) {
                leave(key);
            }
        }
        if (acquired) {
            // Drawn after acquiring, so it exceeds the fence of every earlier holder of the key.
            state.fence = this.fences.incrementAndGet();
            state.holder = Thread.currentThread().getName();
        }
        return acquired;
    }

    private void unlock(String key) {
        KeyState state = heldState(key);
        if (state.lock.getHoldCount() == 1) {
            state.holder = null;
        }
        state.lock.unlock();
        if (!state.lock.isHeldByCurrentThread()) {
            leave(key);
        }
    }

    private void leave(String key) {
        // The caller's own reference keeps the state mapped until this very call.
        this.states.computeIfPresent(key, (k, state) -> (--state.users == 0) ? null : state);
    }

    private KeyState heldState(String key) {
        KeyState state = this.states.get(key);
        if (state == null || !state.lock.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException(
                    "Lock '" + key + "' is not held by the current thread (" + Thread.currentThread().getName() + ")");
        }
        return state;
    }

    /** Per-key state; see the invariant on {@link #states}. */
    private static final class KeyState {

        // Fair, so queued waiters are served in arrival order; unfair acquisitions barge with tryLock().
        final ReentrantLock lock = new ReentrantLock(true);

        // Read and written only inside compute calls on the states map.
        int users;

        // Written by a holder right after its outermost acquisition and read only by the holder,
        // so the lock itself orders every access.
        long fence;

        // Name of the holding thread; written by the holder, read by anyone for diagnostics.
        volatile String holder;
    }

    /** How a lock object waits for the per-key lock. */
    @FunctionalInterface
    private interface Acquisition<E extends Exception> {

        boolean acquire(ReentrantLock lock) throws E;
    }

    private final class InMemoryFencedLock implements FencedLock {

        private final String key;

        private final boolean fair;

        private volatile String lastSeenHolder;

        InMemoryFencedLock(String key, boolean fair) {
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
            acquire(this.key, queued(lock -> {
                lock.lock();
                return true;
            }));
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            checkNotInterrupted();
            acquire(this.key, queued(lock -> {
                lock.lockInterruptibly();
                return true;
            }));
        }

        @Override
        public boolean tryLock() {
            return seenIfMissed(acquire(this.key, ReentrantLock::tryLock));
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            checkNotInterrupted();
            return seenIfMissed(acquire(this.key, queued(lock -> lock.tryLock(time, unit))));
        }

        private boolean seenIfMissed(boolean acquired) {
            if (!acquired) {
                this.lastSeenHolder = getHolder();
            }
            return acquired;
        }

        /*
         * A fair lock object only ever waits in the ReentrantLock's FIFO queue. An unfair one
         * first barges with tryLock(), which succeeds only on a free lock, then waits in the same
         * queue: fair waiters are therefore never reordered among themselves, and the only way
         * to get ahead of them is to find the lock free.
         */
        private <E extends Exception> Acquisition<E> queued(Acquisition<E> wait) {
            return this.fair ? wait : lock -> lock.tryLock() || wait.acquire(lock);
        }

        // The Lock contract throws on an interrupt pending on entry even when the lock is free,
        // before an unfair lock object would barge.
        private void checkNotInterrupted() throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException("Interrupted before acquiring lock '" + this.key + "'");
            }
        }

        @Override
        public void unlock() {
            InMemoryLockRegistry.this.unlock(this.key);
        }

        @Override
        public long getFence() {
            return heldState(this.key).fence;
        }

        @Override
        public boolean isLockedByCurrentThread() {
            KeyState state = InMemoryLockRegistry.this.states.get(this.key);
            return state != null && state.lock.isHeldByCurrentThread();
        }

        @Override
        public int getHoldCount() {
            KeyState state = InMemoryLockRegistry.this.states.get(this.key);
            return (state != null) ? state.lock.getHoldCount() : 0;
        }

        @Override
        public boolean isLocked() {
            KeyState state = InMemoryLockRegistry.this.states.get(this.key);
            return state != null && state.lock.isLocked();
        }

        @Override
        public String getHolder() {
            KeyState state = InMemoryLockRegistry.this.states.get(this.key);
            return (state != null) ? state.holder : null;
        }

        @Override
        public String getLastSeenHolder() {
            return this.lastSeenHolder;
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException(
                    "Conditions are not supported by distributed locks (lock '" + this.key + "')");
        }

        @Override
        public String toString() {
            return "InMemoryFencedLock[key=" + this.key + ", fair=" + this.fair + "]";
        }
    }
}
