package io.github.distlock;

import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

/**
 * A reentrant lock shared by every process that uses the same registry backend, whose every
 * acquisition carries a fencing token.
 *
 * <p>Semantics follow {@link java.util.concurrent.locks.ReentrantLock}: a thread may re-acquire a
 * key it already holds (through any {@code FencedLock} for that key) without waiting, and must
 * unlock as many times; only the holding thread may unlock
 * ({@link IllegalMonitorStateException} otherwise); a negative or zero timeout tries once.
 *
 * <p><b>A lease is not a lock.</b> A distributed hold can end without {@link #unlock()} (the
 * holder's lease expired, for example during a long GC pause or a partition). The lock then
 * reports it: {@link #isLockedByCurrentThread()} turns false and {@link #unlock()} throws
 * {@link LockLostException}. Between the moment the hold ends and the moment the holder notices,
 * another process may already hold the lock. Resources that must never accept a write from a
 * stale holder should therefore check the {@linkplain #getFence() fence}: it is strictly greater
 * for every later acquisition of the same key.
 *
 * <p>Acquisition methods throw {@link LockAcquisitionException} when the backend fails or cannot
 * be reached: timed ones once their timeout has passed (a timed {@code tryLock} that simply did
 * not get the lock returns {@code false}), {@link #lock()} and {@link #lockInterruptibly()} once
 * the backend has been failing for longer than its request timeout. None of them blocks past its
 * timeout, with one floor: the store's calls of an attempt get at least one second (or the request
 * timeout, if shorter), so that a round trip can complete and a cold client connect; a try-once
 * or a timeout under a second against a backend that does not answer returns or throws after
 * about that long. {@link #tryLock()} takes the lock only if it is free, whatever the fairness.
 * {@link #newCondition()} is not supported.
 *
 * <p>After a hold is lost, {@link #getHoldCount()} still counts it and {@link #getFence()} still
 * returns its fence, so the holder can unwind; every {@link #unlock()} of the lost hold throws
 * {@link LockLostException} (the last one removes it), and acquiring the key again on that thread
 * throws {@link LockLostException} until the lost hold is fully unlocked.
 */
public interface FencedLock extends Lock {

    /** @return the key this lock guards */
    String getKey();

    /** @return whether waiters of this lock object are served in arrival order */
    boolean isFair();

    /**
     * Returns the fencing token of the current thread's hold: a number strictly greater than the
     * token of every earlier acquisition of the same key, across all processes.
     * @return the fence of the current hold (the same for reentrant holds)
     * @throws IllegalMonitorStateException if the current thread does not hold the lock
     */
    long getFence();

    /** @return whether the current thread holds this key and the hold has not been lost */
    boolean isLockedByCurrentThread();

    /** @return how many times the current thread holds this key (0 if it does not) */
    int getHoldCount();

    /**
     * Whether the key is held by anyone, in any process. The answer may be stale by the time it
     * returns; use it for monitoring, not for control flow.
     * @return whether the key is held
     */
    boolean isLocked();

    /**
     * Who holds the key, as the backend records it (for etcd: the owner identity of the holding
     * process and the holding thread's name), for error messages and diagnostics. The answer may
     * be stale by the time it returns.
     * @return the holder's identity, or {@code null} if the key is free or the backend records no
     * holder
     */
    default @Nullable String getHolder() {
        return null;
    }

    /**
     * Who was ahead of the latest acquisition through this lock object that did not get the lock,
     * as that acquisition last saw it: the holder, or with several waiters the one served just
     * before it. Never asks the backend, so it never blocks: for the message of a timed-out
     * {@code tryLock}, where {@link #getHolder()} could extend a wait that is already over.
     * @return the identity last seen ahead, or {@code null} if unknown
     */
    default @Nullable String getLastSeenHolder() {
        return null;
    }
}
