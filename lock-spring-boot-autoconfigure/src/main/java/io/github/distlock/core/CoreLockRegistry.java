package io.github.distlock.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.FencedLock;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockLossListener;
import io.github.distlock.LockSnapshot;
import io.github.distlock.LockStatistics;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.HoldLossListener;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreEvents;
import org.jspecify.annotations.Nullable;

/**
 * A registry that is the {@link LockCore} over one {@link LockStore}: what every store's
 * registry has in common (obtaining locks, inspection, statistics, session state), written once.
 * A store's registry extends it, builds its store in the constructor through a
 * {@link StoreFactory}, and adds what is particular to the store (its builder, its settings,
 * {@code close()}, which closes the store).
 * @param <S> the type of the store, so that the registry reaches its own store's particulars without a cast
 */
public abstract class CoreLockRegistry<S extends LockStore> implements InspectableLockRegistry {

    private final LockCounters statistics = new LockCounters();

    private final String ownerIdentity;

    private final S store;

    private final LockCore core;

    private final LocalHandoff localHandoff;

    /**
     * Builds the store, then the core over it.
     * @param ownerIdentity who this process is, recorded with its holds
     * @param localHandoff when unfair entries are kept between the holds of this process's threads
     * @param storeFactory builds the store; the store counts its events into the registry's
     * statistics and reports lost holds to the given listener, which forwards them to the core
     */
    protected CoreLockRegistry(String ownerIdentity, LocalHandoff localHandoff, StoreFactory<S> storeFactory) {
        this.ownerIdentity = ownerIdentity;
        this.localHandoff = localHandoff;
        // The listener reads the core when a loss is reported, after construction: no hold exists before.
        this.store = storeFactory.create(this.statistics, this::holdLost);
        this.core = new LockCore(this.store, this.statistics, ownerIdentity, localHandoff);
    }

    private void holdLost(StoreEntry entry, String reason) {
        this.core.holdLost(entry, reason);
    }

    /** @return the store this registry's core runs over */
    protected S store() {
        return this.store;
    }

    /** @return the core, for registries that expose more of it (per-key waiter counts, for example) */
    protected LockCore core() {
        return this.core;
    }

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

    @Override
    public boolean isSessionAlive() {
        return this.store.isSessionAlive();
    }

    @Override
    public @Nullable Duration getSessionRenewalAge() {
        return this.store.sessionRenewalAge();
    }

    @Override
    public CompletableFuture<Void> connect() {
        return this.store.connect();
    }

    @Override
    public String getNamespace() {
        return this.store.namespace();
    }

    /** @return how unfair locks are shared among this process's threads without store round trips */
    public LocalHandoff getLocalHandoff() {
        return this.localHandoff;
    }

    @Override
    public void addLossListener(LockLossListener listener) {
        this.core.addLossListener(listener);
    }

    @Override
    public boolean removeLossListener(LockLossListener listener) {
        return this.core.removeLossListener(listener);
    }

    @Override
    public String getOwnerIdentity() {
        return this.ownerIdentity;
    }

    /**
     * Builds a registry's store.
     * @param <S> the store's type
     */
    @FunctionalInterface
    protected interface StoreFactory<S extends LockStore> {

        /**
         * @param events what the store counts into the registry's statistics (sessions lost, store errors)
         * @param losses where the store reports lost holds
         * @return the store
         */
        S create(StoreEvents events, HoldLossListener losses);
    }
}
