package io.github.distlock.store;

import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * The one-shot signal behind {@link StoreEntry#whenQueuedBehind}: a store registers the core's
 * callback here and fires it when it learns of an entry queued behind; the callback runs at most
 * once, whichever comes first, and a registration after the fact runs it at once.
 */
public final class QueuedBehindSignal {

    private final AtomicReference<@Nullable Runnable> callback = new AtomicReference<>();

    private volatile boolean fired;

    /**
     * Registers the callback.
     * @param queuedBehind what to run once an entry is queued behind
     * @param alreadyKnown whether the store already knows of one (then it runs now)
     */
    public void register(Runnable queuedBehind, boolean alreadyKnown) {
        this.callback.set(queuedBehind);
        if (alreadyKnown || this.fired) {
            fire();
        }
    }

    /** An entry was queued behind: runs the callback if one is registered and has not run. */
    public void fire() {
        this.fired = true;
        Runnable told = this.callback.getAndSet(null);
        if (told != null) {
            told.run();
        }
    }
}
