package io.github.distlock;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.core.LockCore;
import io.github.distlock.core.LockStatistics;

/**
 * A {@link LockRegistry} whose locks live in this JVM only: the lock core of every registry over
 * an in-memory store, so its semantics are those of the etcd registry, for tests and
 * single-instance applications.
 *
 * <p>Semantics:
 * <ul>
 * <li>One lock per key: every {@link FencedLock} this registry hands out for a key, fair or
 * unfair, excludes every other, and lock objects obtained at different times are
 * interchangeable (a hold taken through one can be re-entered and released through another).</li>
 * <li>Fair acquisitions wait in arrival order. Unfair ones first pass a local gate, where a
 * newcomer may take the key ahead of unfair threads already waiting there, then queue in arrival
 * order with the fair ones. {@link FencedLock#tryLock() tryLock()} takes the key if it is free.</li>
 * <li>Every acquisition gets a fence from a registry-wide counter, so fences increase strictly per
 * key (and across keys); reentrant holds keep the fence of the outermost hold.</li>
 * <li>Interrupts behave as on {@link java.util.concurrent.locks.ReentrantLock}:
 * {@code lockInterruptibly()} and {@code tryLock(time, unit)} throw {@link InterruptedException},
 * also when the interrupt is pending on entry; {@code lock()} keeps waiting and leaves the
 * interrupt status set.</li>
 * </ul>
 *
 * <p>Limits: locks exclude only threads of this JVM that use this registry instance. There is no
 * lease, so a hold lasts until it is unlocked: it is never lost, {@link LockLostException} is
 * never thrown, and a thread that dies while holding a lock blocks its key for good. Conditions
 * are not supported. State is kept only for keys that are held or waited for.
 */
public final class InMemoryLockRegistry implements InspectableLockRegistry {

    /** How in-memory holds name their owner: every hold is of this JVM. */
    static final String OWNER = "in-memory";

    private final InMemoryLockStore store = new InMemoryLockStore(OWNER);

    private final LockStatistics.Recorder statistics = LockStatistics.recorder();

    private final LockCore core = new LockCore(this.store, this.statistics, OWNER);

    @Override
    public FencedLock obtain(String key) {
        return obtain(key, false);
    }

    @Override
    public FencedLock obtain(String key, boolean fair) {
        return this.core.obtain(key, fair);
    }

    @Override
    public LockSnapshot describeLock(String key, int maxEntries) {
        return this.core.describeLock(key, maxEntries);
    }

    @Override
    public NamespaceSnapshot describeLocks(int maxEntries) {
        return this.core.describeLocks(maxEntries);
    }

    @Override
    public LockStatistics getStatistics() {
        return this.statistics.statistics();
    }

    @Override
    public int getHeldLockCount() {
        return this.core.heldLockCount();
    }

    @Override
    public int getWaitingThreadCount() {
        return this.core.waitingThreadCount();
    }

    /** @return always true: the in-memory store has no session to lose */
    @Override
    public boolean isSessionAlive() {
        return true;
    }

    /** @return always zero: nothing needs renewing */
    @Override
    public Duration getSessionRenewalAge() {
        return Duration.ZERO;
    }

    /** @return a completed future: there is nothing to connect to */
    @Override
    public CompletableFuture<Void> connect() {
        return this.store.connect();
    }

    /** @return {@value InMemoryLockStore#NAMESPACE}: locks are shared by the users of this registry instance only */
    @Override
    public String getNamespace() {
        return this.store.namespace();
    }

    /** @return {@value #OWNER} */
    @Override
    public String getOwnerIdentity() {
        return OWNER;
    }

    /**
     * How many threads are waiting to acquire {@code key}; an estimate while threads come and go.
     * @param key the lock key
     * @return the number of waiting threads
     */
    int getQueueLength(String key) {
        return this.core.waitingThreadCount(key);
    }

    /** @return how many keys are currently held or waited for, that is how many keys have state */
    int size() {
        Set<String> keys = new HashSet<>(this.core.activeKeys());
        keys.addAll(this.store.keys());
        return keys.size();
    }
}
