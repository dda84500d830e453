package io.github.distlock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.store.StoreEntry;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Untimed acquisitions while the store fails: each gives up once the store has failed for one
 * request timeout during its wait, also behind other threads of the process at the key's gate.
 * A store that fails every call stands for one that is down; every store's own failures are
 * tested against its real server.
 */
class LockCoreStoreFailureTests {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(1);

    private static final int THREADS = 6;

    @Test
    void untimedUnfairAcquisitionsBehindEachOtherGiveUpAfterOneRequestTimeout() throws Exception {
        LockCore core = new LockCore(new DownStore(), new LockCounters(), "test-process", LocalHandoff.DEFAULT);
        long start = System.nanoTime();
        List<CompletableFuture<Duration>> failures = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            FencedLock lock = core.obtain("sku", false);
            failures.add(CompletableFuture.supplyAsync(() -> {
                try {
                    lock.lock();
                    lock.unlock();
                    throw new AssertionError("acquired on a store that is down");
                }
                catch (LockAcquisitionException ex) {
                    assertThat(ex).hasMessageContaining("store down (test)");
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            }, runnable -> new Thread(runnable).start()));
        }
        for (CompletableFuture<Duration> failure : failures) {
            // One after another, each failing for a request timeout of its own, the last gave up after six.
            assertThat(failure.get(30, TimeUnit.SECONDS)).isLessThan(REQUEST_TIMEOUT.multipliedBy(3));
        }
    }

    /** Fails every call at once, as a store that refuses connections does. */
    private static final class DownStore extends StubLockStore {

        DownStore() {
            super("down", REQUEST_TIMEOUT);
        }

        @Override
        public StoreEntry newEntry(String key, Wait attempt) throws StoreUnavailableException {
            throw new StoreUnavailableException("store down (test)", null);
        }

        @Override
        public boolean isSessionAlive() {
            return false;
        }
    }
}
