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
 * the backend has been failing for longer than its request timeout. None of them waits past its
 * timeout, with one floor: the store's calls of an attempt get at least one second (or the request
 * timeout, if shorter), so that a round trip can complete and a cold client connect. A try-once
 * or a timeout under a second against a backend that does not answer therefore returns or throws
 * after about that long, and a timed wait that starts a new attempt shortly before its timeout
 * can end up to that long after it (see {@link #tryLock(long, java.util.concurrent.TimeUnit)} for the exact bound).
 * {@link #tryLock()} takes the lock only if it is free, whatever the fairness.
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
     * Acquires the lock if it is free or becomes free within {@code time}, as
     * {@link Lock#tryLock(long, TimeUnit)} does; a zero or negative time tries once.
     *
     * <p><b>How long it may take.</b> It returns or throws no later than {@code time} plus one
     * second, or plus the registry's request timeout if that is shorter (and plus thread
     * scheduling). Waiting for the lock ends at the timeout; what may outlast it is a store
     * attempt: every attempt's store calls (writing the entry, and on giving up waiting for the
     * store to confirm its removal) get until the timeout or until one second after the attempt
     * started, whichever is later, and never more than one request timeout. The first attempt
     * starts with the call; a new
     * one starts, while the timeout has not passed yet, when the entry was lost while it waited
     * (deleted or expired in the store, its session lost) or a store call failed. So a call with
     * a timeout under a second against a store that does not answer, or one whose entry is lost
     * just before its timeout, can end up to a second after the timeout; a wait that simply
     * times out returns at its timeout.
     * @param time the longest to wait for the lock
     * @param unit the unit of {@code time}
     * @return whether the lock was acquired
     * @throws InterruptedException if the thread was interrupted while waiting
     * @throws LockAcquisitionException if the store failed or could not be reached and the
     * timeout passed meanwhile, or the registry was closed
     * @throws LockLostException if the thread's hold of the key was lost and not yet unlocked
     */
    @Override
    boolean tryLock(long time, java.util.concurrent.TimeUnit unit) throws InterruptedException;

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
