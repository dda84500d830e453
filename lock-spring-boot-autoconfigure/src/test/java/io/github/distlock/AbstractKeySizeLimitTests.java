package io.github.distlock;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * G9's size limit against a store's real server: a key whose size in the store (escaped,
 * namespace included, as the store counts it) is over the store's limit is rejected when its lock
 * is obtained or described, with an {@link IllegalArgumentException} that names its size and the
 * limit, before anything reaches the store, and the registry's other holds go on; a key at the
 * limit locks, excludes and unlocks like any other. Extend it once per store.
 *
 * <p>The keys are made of {@code %}, which every store escapes to three bytes, or of quotes and
 * backslashes, which a SQL driver may escape to two on the wire.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class AbstractKeySizeLimitTests {

    /** @return the registry under test, which the subclass creates and closes */
    protected abstract InspectableLockRegistry registry();

    /** @return a registry on the same store that stands for another process */
    protected abstract LockRegistry peerRegistry();

    /** @return the limit the README states for the store, in bytes */
    protected abstract long limit();

    /**
     * @param key a lock key
     * @return its size in the store, in bytes, measured on the names the store builds for it
     */
    protected abstract long sizeOf(String key);

    /**
     * Asserts that the registry's connection to the store is as it was when
     * {@link #markConnection()} was called: not dropped, not renewed. Does nothing by default.
     */
    protected void assertConnectionUndisturbed() {
    }

    /** Notes the state of the registry's connection to the store, for {@link #assertConnectionUndisturbed()}. */
    protected void markConnection() {
    }

    /** @return the bound on waits that end only if a test fails */
    protected Duration longWait() {
        return Duration.ofSeconds(30);
    }

    @Test
    void keysOverTheLimitAreRejectedBeforeAnythingIsSentAndOtherHoldsGoOn() throws Exception {
        String other = "other-" + UUID.randomUUID();
        FencedLock held = registry().obtain(other, true);
        assertThat(held.tryLock(longWait().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            markConnection();
            Map<String, Throwable> thrown = new LinkedHashMap<>();
            long overhead = sizeOf("");
            int escapedOver = (int) ((limit() - overhead) / 3 + 1);
            Map<String, String> keys = Map.of("one byte over", keyAtTheLimit() + "k",
                    "escaped over (fewer characters than the limit)", "%".repeat(escapedOver),
                    "three times over", "%".repeat((int) Math.min(limit(), Integer.MAX_VALUE / 4)));
            for (Map.Entry<String, String> key : keys.entrySet()) {
                for (boolean fair : new boolean[] { true, false }) {
                    thrown.put(key.getKey() + ", fair " + fair + ": obtain and tryLock", catchThrowable(
                            () -> registry().obtain(key.getValue(), fair).tryLock(1, TimeUnit.SECONDS)));
                }
                thrown.put(key.getKey() + ": describeLock", catchThrowable(
                        () -> registry().describeLock(key.getValue(), 10)));
            }

            assertConnectionUndisturbed();
            assertThat(held.isLockedByCurrentThread()).as("the other hold").isTrue();
            assertThat(tryAndRelease(peerRegistry().obtain(other, true))).as("another process took the held key")
                .isFalse();
            for (Map.Entry<String, String> key : keys.entrySet()) {
                long size = sizeOf(key.getValue());
                assertThat(size).as(key.getKey()).isGreaterThan(limit());
                thrown.entrySet().stream().filter(attempt -> attempt.getKey().startsWith(key.getKey()))
                    .forEach(attempt -> assertThat(attempt.getValue()).as(attempt.getKey())
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("takes " + size + " bytes")
                        .hasMessageContaining("limit of " + limit() + " bytes")
                        .hasMessageContaining("...(" + key.getValue().length() + " chars)"));
            }
        }
        finally {
            held.unlock();
        }
    }

    @Test
    void aKeyAtTheLimitLocksExcludesAndUnlocks() throws Exception {
        String key = keyAtTheLimit();
        assertThat(sizeOf(key)).isEqualTo(limit());
        FencedLock lock = registry().obtain(key, true);
        assertThat(lock.tryLock(longWait().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        long fence = lock.getFence();
        try {
            assertThat(tryAndRelease(peerRegistry().obtain(key, false))).as("another process took the held key")
                .isFalse();
            LockSnapshot described = registry().describeLock(key, 10);
            assertThat(described.holder()).isNotNull();
            assertThat(described.holder().fence()).isEqualTo(fence);
        }
        finally {
            lock.unlock();
        }
        FencedLock next = peerRegistry().obtain(key, false);
        assertThat(next.tryLock(longWait().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(next.getFence()).isGreaterThan(fence);
        next.unlock();
    }

    /**
     * A key whose size in the store is the limit, of quotes and backslashes: one byte each in every
     * store, and two on the wire of a SQL driver that escapes them.
     */
    private String keyAtTheLimit() {
        long room = limit() - sizeOf("");
        StringBuilder key = new StringBuilder((int) room);
        for (long i = 0; i < room; i++) {
            key.append((i % 2 == 0) ? '\'' : '\\');
        }
        return key.toString();
    }
}
