package io.github.distlock;

import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.inmemory.InMemoryLockStore;

/**
 * A {@link LockRegistry} whose locks live in this JVM only: the lock core of every registry over
 * an in-memory store, so its semantics are those of the other stores' registries, for tests and
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
public final class InMemoryLockRegistry extends CoreLockRegistry<InMemoryLockStore> {

    /** Creates a registry whose locks are shared by the users of this instance only. */
    public InMemoryLockRegistry() {
        this(LocalHandoff.DEFAULT);
    }

    /**
     * Creates a registry whose locks are shared by the users of this instance only.
     * @param localHandoff how unfair holds are passed between threads without a store call
     */
    public InMemoryLockRegistry(LocalHandoff localHandoff) {
        // Holds in memory are never lost, so the store has no losses to report.
        super(InMemoryLockStore.OWNER, Objects.requireNonNull(localHandoff, "localHandoff must not be null"),
                (events, losses) -> new InMemoryLockStore());
    }

    /**
     * How many threads are waiting to acquire {@code key}; an estimate while threads come and go.
     * @param key the lock key
     * @return the number of waiting threads
     */
    int getQueueLength(String key) {
        return core().waitingThreadCount(key);
    }

    /** @return how many keys are currently held or waited for, that is how many keys have state */
    int size() {
        Set<String> keys = new HashSet<>(core().activeKeys());
        keys.addAll(store().keys());
        return keys.size();
    }
}
