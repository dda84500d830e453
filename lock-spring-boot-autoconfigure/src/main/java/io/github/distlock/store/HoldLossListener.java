package io.github.distlock.store;

/** Told by a store when a held entry ends without its release. */
@FunctionalInterface
public interface HoldLossListener {

    /**
     * A hold ended without its release: reported exactly once per held entry, on whichever thread
     * noticed (a store thread, or an acquiring or releasing thread). Must not block.
     * @param entry the entry that was held
     * @param reason why it ended
     */
    void holdLost(StoreEntry entry, String reason);
}
