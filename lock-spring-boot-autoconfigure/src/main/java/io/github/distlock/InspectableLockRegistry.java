package io.github.distlock;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A {@link LockRegistry} that tells operators how it stands, whatever its store: who holds and
 * who waits in every process, its own holds and waiters, running totals and its session. The
 * health indicator, the meters and the {@code distributedlocks} endpoint read registries through
 * this interface.
 */
public interface InspectableLockRegistry extends LockRegistry {

    /**
     * Reads from the store who holds {@code key} and who waits for it, in every process that
     * shares the namespace.
     * @param key the lock key
     * @param maxEntries at most this many queue entries are read, oldest first
     * @return the lock's holder and waiters; a free lock has no holder and no waiters
     * @throws IllegalArgumentException if the key is null, empty or over the store's size limit, or
     * maxEntries not positive
     * @throws IllegalStateException if the store did not answer within the request timeout
     */
    LockSnapshot describeLock(String key, int maxEntries);

    /**
     * Reads from the store every lock of the namespace that has a holder or a waiter.
     * @param maxEntries at most this many queue entries are read; the result says whether more exist
     * @return the locks, ordered by key
     * @throws IllegalArgumentException if maxEntries is not positive
     * @throws IllegalStateException if the store did not answer within the request timeout
     */
    NamespaceSnapshot describeLocks(int maxEntries);

    /** @return running totals of acquisitions, timeouts, failures, losses and store errors */
    LockStatistics getStatistics();

    /** @return threads of this registry that hold a lock and have not lost it (a reentrant hold counts once) */
    int getHeldLockCount();

    /** @return threads of this registry waiting for a lock right now */
    int getWaitingThreadCount();

    /** @return whether the registry holds a live session with its store */
    boolean isSessionAlive();

    /** @return how long ago the session was last renewed, or {@code null} before the first session */
    @Nullable Duration getSessionRenewalAge();

    /**
     * Starts a session in the background, so that the first acquisition does not pay for
     * connecting. Optional; acquisitions connect on demand.
     * @return completes once connected, or exceptionally with the store's failure
     */
    CompletableFuture<Void> connect();

    /** @return the namespace under which this registry's locks live */
    String getNamespace();

    /** @return who this process is, as recorded with its holds */
    String getOwnerIdentity();

    /**
     * Tells {@code listener} of every hold of this registry that is lost from now on, including
     * holds passed on between threads of the process and unlocked before the store reported their
     * entry lost, which no {@code unlock()} could tell.
     * @param listener called once per loss report; see {@link LockLossListener} for its thread
     * @throws UnsupportedOperationException if the registry cannot tell (the default, for
     * implementations of this interface written before it had listeners)
     */
    default void addLossListener(LockLossListener listener) {
        throw new UnsupportedOperationException(getClass().getName() + " does not report lost holds to listeners");
    }

    /**
     * @param listener a listener added before
     * @return whether it was registered (and is no longer)
     */
    default boolean removeLossListener(LockLossListener listener) {
        return false;
    }
}
