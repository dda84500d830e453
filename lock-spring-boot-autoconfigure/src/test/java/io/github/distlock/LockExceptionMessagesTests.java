package io.github.distlock;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The exceptions' messages show a long key abbreviated, as log lines do, and a short one whole;
 * {@code getKey()} keeps the whole key. A key can be as long as a store's size limit: a message
 * that carried it whole would copy it into every log line and error response that shows it.
 */
class LockExceptionMessagesTests {

    private static final String LONG_KEY = "order-" + "x".repeat(1_000_000);

    @Test
    void acquisitionFailureAbbreviatesALongKeyAndKeepsItWhole() {
        LockAcquisitionException ex = new LockAcquisitionException(LONG_KEY, Duration.ofMillis(1500), "p1@host:1/main",
                "timed out", null);
        assertThat(ex.getMessage()).isEqualTo("Could not acquire lock '" + LONG_KEY.substring(0, 100)
                + "...(1000006 chars)' after 1500 ms: timed out (held by p1@host:1/main)");
        assertThat(ex.getKey()).isEqualTo(LONG_KEY);
    }

    @Test
    void acquisitionFailureShowsAShortKeyWhole() {
        String key = "k".repeat(KeyAbbreviation.SHOWN);
        LockAcquisitionException ex = new LockAcquisitionException(key, Duration.ZERO, null, "timed out", null);
        assertThat(ex.getMessage()).isEqualTo("Could not acquire lock '" + key + "' after 0 ms: timed out");
    }

    @Test
    void lostHoldAbbreviatesALongKeyAndKeepsItWhole() {
        LockLostException ex = new LockLostException(LONG_KEY, 42, "its lease expired");
        assertThat(ex.getMessage()).isEqualTo("Lock '" + LONG_KEY.substring(0, 100)
                + "...(1000006 chars)' (fence 42) was lost before unlock: its lease expired");
        assertThat(ex.getKey()).isEqualTo(LONG_KEY);
        assertThat(ex.getFence()).isEqualTo(42);
    }

    @Test
    void lostHoldShowsAShortKeyWhole() {
        assertThat(new LockLostException("order-1", 7, "deleted").getMessage())
            .isEqualTo("Lock 'order-1' (fence 7) was lost before unlock: deleted");
    }

    @Test
    void anAbbreviationDoesNotSplitASurrogatePair() {
        // U+1F512 (a lock) is two chars; its first half is the 100th char of the key.
        String key = "k".repeat(KeyAbbreviation.SHOWN - 1) + "\uD83D\uDD12" + "tail";
        LockLostException ex = new LockLostException(key, 1, "deleted");
        assertThat(ex.getMessage()).startsWith("Lock '" + "k".repeat(KeyAbbreviation.SHOWN - 1) + "...(105 chars)'");
    }
}
