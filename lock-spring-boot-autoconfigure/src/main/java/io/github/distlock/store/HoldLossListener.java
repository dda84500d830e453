package io.github.distlock.store;

/** Told by a store when a held entry ends without its release. */
@FunctionalInterface
public interface HoldLossListener {

    /**
     * A hold ended without its release: reported once per entry, on a store thread. Must not block.
     * @param entry the entry that was held
     * @param reason why it ended
     */
    void holdLost(StoreEntry entry, String reason);
}
