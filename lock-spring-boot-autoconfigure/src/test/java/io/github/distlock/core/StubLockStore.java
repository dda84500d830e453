package io.github.distlock.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.distlock.LockSnapshot;
import io.github.distlock.NamespaceSnapshot;
import io.github.distlock.store.LockStore;
import org.jspecify.annotations.Nullable;

/**
 * What the core's tests need of a store besides its entries: a live, open store that is never
 * read. The core is under test, not a store; every store is tested against its real server.
 */
abstract class StubLockStore implements LockStore {

    private final String name;

    private final Duration requestTimeout;

    StubLockStore(String name, Duration requestTimeout) {
        this.name = name;
        this.requestTimeout = requestTimeout;
    }

    @Override
    public LockSnapshot read(String key, int maxEntries, boolean withLeases) {
        throw new UnsupportedOperationException("not read by these tests");
    }

    @Override
    public NamespaceSnapshot readAll(int maxEntries) {
        throw new UnsupportedOperationException("not read by these tests");
    }

    @Override
    public CompletableFuture<Void> connect() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public long keySize(String key) {
        return key.length();
    }

    @Override
    public long maxKeySize() {
        return Long.MAX_VALUE;
    }

    @Override
    public String namespace() {
        return this.name;
    }

    @Override
    public long requestTimeoutNanos() {
        return this.requestTimeout.toNanos();
    }

    @Override
    public boolean isSessionAlive() {
        return true;
    }

    @Override
    public @Nullable Duration sessionRenewalAge() {
        return null;
    }

    @Override
    public String describe() {
        return this.name + " store";
    }

    @Override
    public void checkOpen() {
    }

    @Override
    public boolean isClosed() {
        return false;
    }

    @Override
    public void close() {
    }
}
