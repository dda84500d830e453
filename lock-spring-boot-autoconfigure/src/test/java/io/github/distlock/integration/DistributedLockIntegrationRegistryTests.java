package io.github.distlock.integration;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.FencedLock;
import io.github.distlock.InMemoryLockRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The adapter's own logic, over the in-memory registry: key mapping, fairness, Spring Integration's defaults. */
class DistributedLockIntegrationRegistryTests {

    private final InMemoryLockRegistry registry = new InMemoryLockRegistry();

    private final DistributedLockIntegrationRegistry adapter = new DistributedLockIntegrationRegistry(this.registry);

    @Test
    void keysAreTheKeyObjectsStrings() {
        FencedLock lock = this.adapter.obtain(new Key("order:42"));
        assertThat(lock.getKey()).isEqualTo("order:42");
        lock.lock();
        try {
            // The same string through the registry directly is the same lock.
            assertThat(this.registry.obtain("order:42").isLockedByCurrentThread()).isTrue();
            assertThat(this.adapter.obtain(42).isLockedByCurrentThread()).isFalse();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void nullAndEmptyKeysAreRejectedClearly() {
        assertThatIllegalArgumentException().isThrownBy(() -> this.adapter.obtain(null))
            .withMessage("Spring Integration lock key must not be null");
        assertThatIllegalArgumentException().isThrownBy(() -> this.adapter.obtain(new Key("")))
            .withMessageContaining(Key.class.getName())
            .withMessageContaining("an empty toString()");
        assertThatIllegalArgumentException().isThrownBy(() -> this.adapter.obtain(new Key(null)))
            .withMessageContaining("a null toString()");
        assertThatIllegalArgumentException().isThrownBy(() -> new DistributedLockIntegrationRegistry(null));
    }

    @Test
    void fairByDefaultAndConfigurable() {
        assertThat(this.adapter.isFair()).isTrue();
        assertThat(this.adapter.obtain("k").isFair()).isTrue();
        DistributedLockIntegrationRegistry unfair = new DistributedLockIntegrationRegistry(this.registry, false);
        assertThat(unfair.isFair()).isFalse();
        assertThat(unfair.obtain("k").isFair()).isFalse();
    }

    @Test
    void executeLockedRunsUnderTheLockAndTimesOutWhileAnotherHoldsIt() throws Exception {
        String inside = this.adapter.executeLocked("job", () -> {
            assertThat(this.registry.obtain("job").isLockedByCurrentThread()).isTrue();
            return "ran";
        });
        assertThat(inside).isEqualTo("ran");
        assertThat(this.registry.obtain("job").isLocked()).isFalse();

        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
            FencedLock lock = this.adapter.obtain("job");
            lock.lock();
            try {
                held.countDown();
                release.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                lock.unlock();
            }
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            assertThatThrownBy(() -> this.adapter.executeLocked("job", Duration.ofMillis(100), () -> {
            })).isInstanceOf(TimeoutException.class).hasMessageContaining("job");
        }
        finally {
            release.countDown();
            holder.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void onlyTheHoldingThreadUnlocks() {
        FencedLock lock = this.adapter.obtain("owned");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    /** A key object, as Spring Integration passes them (correlation keys, roles). */
    private record Key(String value) {

        @Override
        public String toString() {
            return this.value;
        }
    }
}
