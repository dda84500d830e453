package io.github.distlock.store;

import org.jspecify.annotations.Nullable;

/**
 * One acquisition's entry in a store: written once, owns its key when every older entry of the
 * key is gone, and is then released or lost. {@link #acquire}, then {@link #release()} or
 * {@link #discard()}, are called one at a time, though not always by one thread:
 * the core may pass a held entry to another thread of the process, or release it from its own
 * release thread (see {@link io.github.distlock.LocalHandoff}); the queries
 * ({@link #lockKey()}, {@link #fence()}, {@link #ahead()}, {@link #lostReason()},
 * {@link #isWaiting()}, {@link #isHolding()}) may be called by any thread at any time.
 */
public interface StoreEntry {

    /** @return the lock key */
    String lockKey();

    /**
     * Writes the entry and waits until it owns the key or {@code wait} is over. A wait that is
     * over when the entry is written (a try-once) still gets the answer of that write.
     * @param wait the caller's wait
     * @param attempt bounds writing the entry: it may end after {@code wait}, so that a zero
     * timeout still makes one attempt
     * @return whether the entry owns the key; if not, it is being removed in the background
     * @throws EntryLostException if the entry or its session vanished before it owned the key; a
     * new entry may try again
     * @throws StoreUnavailableException if a store call failed or got no answer in time; the entry
     * is being removed in the background
     * @throws InterruptedException if {@code wait} is interruptible and the thread was interrupted
     */
    boolean acquire(Wait wait, Wait attempt)
            throws StoreUnavailableException, EntryLostException, InterruptedException;

    /** @return the fence: defined once {@link #acquire} returned true */
    long fence();

    /** @return who the entry last saw ahead of it (the holder or the entry before it), a hint for messages */
    @Nullable String ahead();

    /** @return why the entry ended without its release (it may have been held), or {@code null} */
    @Nullable String lostReason();

    /** @return whether the entry is written and waiting behind an older one */
    boolean isWaiting();

    /** @return whether the entry owns the key and was not released (it may have been lost since) */
    boolean isHolding();

    /**
     * Releases a held entry, with a compare on the entry's identity so that it never removes
     * another holder's entry.
     * @return {@code false} if the entry was already gone (the hold had been lost)
     * @throws StoreUnavailableException if the store did not confirm; the release is then retried
     * in the background
     */
    boolean release() throws StoreUnavailableException;

    /** Drops a lost hold: removes what may be left of the entry, in the background. */
    void discard();

    /** What {@link #confirmedAt()} answers for a store that confirms an entry only by writing it. */
    long NEVER_CONFIRMED = Long.MIN_VALUE;

    /**
     * When the store last showed the held entry present, as a {@link System#nanoTime()}: the send
     * time of the latest request whose answer found it (a renewal that checks its entries, for
     * example). If the entry vanished from the store, it vanished after this. The core reports the
     * holds it passed on locally and that were unlocked at or after this time as lost, once it
     * learns the entry is gone; so a store that answers later than the truth would hide lost
     * holds, and one that answers earlier only reports more of them.
     * @return that time, or {@link #NEVER_CONFIRMED} if the store confirms an entry only by
     * writing it: every hold passed on it then counts as lost when it is lost
     */
    default long confirmedAt() {
        return NEVER_CONFIRMED;
    }

    /**
     * Asks to be told when another entry of the key, of any process, is queued behind this held
     * entry, as far as the store learns it without a round trip (a watch event, a local queue).
     * The core keeps an unfair entry between its own threads only while no one else waits, or
     * briefly; stores that cannot tell return {@code false} and the core then assumes others may
     * wait from the moment the entry is held.
     * @param queuedBehind run at most once, on any thread, also at once if an entry is already
     * known to be queued behind; must not block
     * @return whether the store will tell
     */
    default boolean whenQueuedBehind(Runnable queuedBehind) {
        return false;
    }
}
