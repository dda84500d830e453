package io.github.distlock.store;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * Where a registry's locks are kept: the one thing a store decides is who holds a key. The lock
 * semantics on top (reentrancy, the unfair gate, retrying until a deadline, reporting a lost hold,
 * statistics) are written once, in {@link io.github.distlock.core.LockCore}.
 *
 * <p>What a store must promise, per guarantee:
 * <ul>
 * <li><b>Session (liveness).</b> Every entry is tied to a session of the registry (an etcd lease,
 * a ZooKeeper session, a row or key the registry renews). The store renews it while the process
 * lives, considers it alive only while the server cannot have expired it yet (measured on the
 * monotonic clock from the send of the last acknowledged renewal), ends it with a cause when that
 * no longer holds, and starts a new session for the next acquisition after a loss. A crashed
 * process's entries vanish within the session TTL the server granted.</li>
 * <li><b>Entries (exclusion, fairness, fencing).</b> {@link #newEntry} creates one entry per
 * acquisition, unique even among threads of one session. Entries of a key own it one at a time,
 * in the order they were written; the fence of an entry is strictly greater than the fence of
 * every entry of the key written before it, also across sessions, processes and server restarts.</li>
 * <li><b>Loss.</b> When a held entry ends without its release (session lost, entry deleted), the
 * store tells its {@link HoldLossListener} exactly once, also when only the release finds the
 * entry gone, and {@link StoreEntry#lostReason()} turns non-null for good. An entry lost before
 * it owned its key is no lost hold: {@link StoreEntry#acquire} then throws
 * {@link EntryLostException} rather than return true.</li>
 * <li><b>Clean-up, in one place.</b> Entries whose acquisition gave up, whose release was not
 * confirmed, or whose write had an unknown outcome (ghosts) are deleted in the background,
 * retried until the server confirms or their session ends; none delays a later waiter for longer
 * than its session lives.</li>
 * <li><b>Key size.</b> {@link #maxKeySize()} is the largest key the store carries without a call
 * failing or disturbing other holds (a shared connection dropped or stalled); the core rejects
 * larger keys before anything is sent.</li>
 * <li><b>Bounded calls.</b> Every store call returns within the {@link Wait} it is given and the
 * {@linkplain #requestTimeoutNanos() request timeout}, whatever the client library's defaults.</li>
 * <li><b>One reader</b> of a key's holder and waiters, used by errors, tools, the endpoint and
 * health alike.</li>
 * </ul>
 * Implementations are thread-safe.
 */
public interface LockStore {

    /**
     * Starts one acquisition of {@code key}: an entry bound to the current session, a new session
     * being started first if there is none alive. Nothing is written yet.
     * @param key the lock key
     * @param attempt bounds starting a session
     * @return the entry; the store tracks it until it gave up or was released, so the caller must
     * call {@link StoreEntry#acquire} on it exactly once
     * @throws StoreUnavailableException if no session could be started within {@code attempt}
     * @throws InterruptedException if {@code attempt} is interruptible and the thread was interrupted
     */
    StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException, InterruptedException;

    /**
     * Reads {@code key}'s holder and waiters, in every process: the store's one reader of a key's
     * queue, used by errors, tools, the endpoint and health alike.
     * @param key the lock key
     * @param maxEntries at most this many entries are read, oldest first (so the holder is always
     * among them)
     * @param withLeases whether to read how long each entry's lease has left (may cost more reads)
     * @return the lock as the store showed it
     * @throws IllegalStateException if the store did not answer within the request timeout
     */
    LockSnapshot read(String key, int maxEntries, boolean withLeases);

    /**
     * Reads every lock of the store's namespace that has a holder or a waiter, with lease times.
     * @param maxEntries at most this many entries are read, oldest first
     * @return the locks, ordered by key
     * @throws IllegalStateException if the store did not answer within the request timeout
     */
    NamespaceSnapshot readAll(int maxEntries);

    /**
     * Reads who holds {@code key} now, in any process.
     * @param key the lock key
     * @return the holder's identity ({@code owner/thread}), or {@code null} if the key is free
     * @throws IllegalStateException if the store did not answer within the request timeout
     */
    default @Nullable String holder(String key) {
        LockSnapshot.Entry holder = read(key, 1, false).holder();
        return (holder != null) ? holder.describe() : null;
    }

    /**
     * Starts a session and whatever else acquisitions need (a watch, a subscription) in the
     * background, so that the first acquisition does not pay for connecting.
     * @return completes once connected, or exceptionally with an {@link IllegalStateException}
     * that says why
     */
    CompletableFuture<Void> connect();

    /**
     * How much room {@code key} takes in this store: what {@link #maxKeySize()} limits.
     * @param key a non-empty lock key
     * @return the size in bytes of the key's names in the store (escaped, namespace included; the
     * store's javadoc says which name)
     */
    long keySize(String key);

    /**
     * The largest {@link #keySize} this store carries without a call failing or disturbing other
     * holds. {@link io.github.distlock.core.LockCore} checks it when a lock is obtained, so no store
     * call ever carries a larger key.
     * @return the limit in bytes, or {@link Long#MAX_VALUE} if there is none
     */
    long maxKeySize();

    /** @return the namespace under which the store keeps its locks */
    String namespace();

    /** @return the bound on each store call, and how long an untimed acquisition bears a failing store */
    long requestTimeoutNanos();

    /** @return whether the store has a live session right now */
    boolean isSessionAlive();

    /** @return how long ago the current session was last renewed, or {@code null} before the first session */
    @Nullable Duration sessionRenewalAge();

    /** @return where the store is, for messages: for example {@code etcd at [http://10.0.0.1:2379]} */
    String describe();

    /**
     * Throws if the store was closed.
     * @throws IllegalStateException if it was
     */
    void checkOpen();

    /** @return whether the store was closed */
    boolean isClosed();

    /**
     * Ends this store's session, which frees every entry it holds at once (removals not yet
     * confirmed included); holds still open report themselves lost and waiters fail. Leaves a
     * client the application gave the store open. Idempotent.
     */
    void close();
}
