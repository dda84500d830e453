package io.github.distlock.store;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The value of a queue entry: who wrote it, on which thread, since when. */
class EntryValueTests {

    private static final long WRITTEN_AT = 1_700_000_000_123L;

    @Test
    void decodesWhatItEncodes() {
        String value = EntryValue.encode("orders@host-1:4242", "http-nio-8080-exec-3", WRITTEN_AT);

        assertThat(value).isEqualTo("orders@host-1:4242\nhttp-nio-8080-exec-3\n" + WRITTEN_AT);
        assertThat(EntryValue.decode(value))
            .isEqualTo(new EntryValue("orders@host-1:4242", "http-nio-8080-exec-3", Instant.ofEpochMilli(WRITTEN_AT)));
    }

    @Test
    void keepsTimesBeforeTheEpochAndAtTheEndsOfTheRange() {
        for (long millis : new long[] { 0, -1, Long.MIN_VALUE, Long.MAX_VALUE }) {
            assertThat(EntryValue.decode(EntryValue.encode("o", "t", millis)).queuedAt())
                .isEqualTo(Instant.ofEpochMilli(millis));
        }
    }

    @Test
    void turnsLineBreaksInThreadNamesIntoSpaces() {
        EntryValue decoded = EntryValue.decode(EntryValue.encode("app@host:1", "\nworker\n\n7\n", WRITTEN_AT));

        assertThat(decoded).isEqualTo(new EntryValue("app@host:1", " worker  7 ", Instant.ofEpochMilli(WRITTEN_AT)));
    }

    @Test
    void turnsCarriageReturnsInThreadNamesIntoSpaces() {
        EntryValue decoded = EntryValue.decode(EntryValue.encode("app@host:1", "worker\r\n7\r", WRITTEN_AT));

        assertThat(decoded.thread()).doesNotContain("\r", "\n").startsWith("worker").endsWith("7 ");
        assertThat(decoded.describe()).doesNotContain("\r");
    }

    @Test
    void keepsEmptyThreadNames() {
        EntryValue decoded = EntryValue.decode(EntryValue.encode("app@host:1", "", WRITTEN_AT));

        assertThat(decoded).isEqualTo(new EntryValue("app@host:1", "", Instant.ofEpochMilli(WRITTEN_AT)));
        assertThat(decoded.describe()).isEqualTo("app@host:1/");
    }

    @ParameterizedTest
    @ValueSource(strings = { "a", "orders/eu@host:1/extra", "ключ@хост:7", "\uD83D\uDD12@host:1", "with spaces @ host",
            "%2F%25#", "tab\there", "12345", "" })
    void keepsOwnerIdentitiesWithUnusualCharacters(String owner) {
        EntryValue decoded = EntryValue.decode(EntryValue.encode(owner, "main", WRITTEN_AT));

        assertThat(decoded).isEqualTo(new EntryValue(owner, "main", Instant.ofEpochMilli(WRITTEN_AT)));
        assertThat(decoded.describe()).isEqualTo(owner + "/main");
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "plain", "one\nline break", "owner\nthread\nnot a time", "owner\nthread\n",
            "owner\nthread\n12.5", "owner\nthread\n 12", "owner\nthread\n99999999999999999999", "\n\n" })
    void showsValuesWrittenBySomethingElseWholeAsTheOwner(String foreign) {
        EntryValue decoded = EntryValue.decode(foreign);

        assertThat(decoded).isEqualTo(new EntryValue(foreign, null, null));
        assertThat(decoded.describe()).isEqualTo(foreign);
    }

    @Test
    void readsAValueWithMoreLinesAsOwnerThenEverythingUpToTheTime() {
        EntryValue decoded = EntryValue.decode("owner\nthread\nmore\n42");

        assertThat(decoded).isEqualTo(new EntryValue("owner", "thread\nmore", Instant.ofEpochMilli(42)));
    }

    @Test
    void readsBytesThatAreNotUtf8WithoutFailing() {
        byte[] bytes = { 'o', (byte) 0xC3, '\n', 't', (byte) 0xFF, '\n', '5' };

        EntryValue decoded = EntryValue.decode(new String(bytes, StandardCharsets.UTF_8));

        assertThat(decoded).isEqualTo(new EntryValue("o\uFFFD", "t\uFFFD", Instant.ofEpochMilli(5)));
    }

    @Test
    void describesTheWriterAsOwnerSlashThreadOrTheOwnerAlone() {
        assertThat(new EntryValue("app@host:1", "main", Instant.EPOCH).describe()).isEqualTo("app@host:1/main");
        assertThat(new EntryValue("app@host:1", "main", null).describe()).isEqualTo("app@host:1/main");
        assertThat(new EntryValue("app@host:1", null, null).describe()).isEqualTo("app@host:1");
    }
}
