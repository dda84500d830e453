package io.github.distlock.inmemory;

import io.github.distlock.store.AbstractLockStoreContractTests;
import io.github.distlock.store.LockStore;
import io.github.distlock.store.StoreEntry;

/** The in-memory store against the store contract; its holds and its session cannot be lost. */
class InMemoryLockStoreContractTests extends AbstractLockStoreContractTests {

    private final InMemoryLockStore store = new InMemoryLockStore();

    @Override
    protected LockStore store() {
        return this.store;
    }

    @Override
    protected LockStore peerStore() {
        return this.store;
    }

    @Override
    protected boolean endHoldBehindTheStoresBack(StoreEntry entry) {
        return false;
    }

    @Override
    protected boolean endSessionBehindTheStoresBack(LockStore store) {
        return false;
    }

    @Override
    protected boolean loseHoldAheadOfTheBackend(StoreEntry entry) {
        return false;
    }
}
