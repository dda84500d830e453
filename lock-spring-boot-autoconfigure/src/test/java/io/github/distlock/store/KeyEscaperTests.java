package io.github.distlock.store;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The size of escaped keys, which the stores' key limits count, and how log lines show long keys. */
class KeyEscaperTests {

    private static final KeyEscaper[] ESCAPERS = { new KeyEscaper("/"), new KeyEscaper("{}"),
            new KeyEscaper("", c -> c == 0), new KeyEscaper("/#", c -> c < 0x20 || (c >= 0xd800 && c <= 0xf8ff)) };

    @ParameterizedTest
    @ValueSource(strings = { "", "a", "%", "/", "{}", "#", "a/b%c", "\u0000", "\u001f", "\u007f", "\u00e9", "\u0800",
            "ключ", "\uD83D\uDD12", "\uD83D", "\uDD12", "\uDD12\uD83D", "a\uD83D", "\uE000", "\uFFFF", "%uD83D" })
    void escapedSizeIsTheUtf8LengthOfTheEscapedKey(String key) {
        for (KeyEscaper escaper : ESCAPERS) {
            for (String candidate : new String[] { key, key + key + "x", "x" + key }) {
                assertThat(escaper.escapedSize(candidate)).as("'%s'", candidate)
                    .isEqualTo(escaper.escape(candidate).getBytes(StandardCharsets.UTF_8).length);
            }
        }
    }

    @Test
    void escapesAreUpperCaseHex() {
        KeyEscaper escaper = new KeyEscaper("/{", c -> c == 0 || c == 0xfff0);
        assertThat(escaper.escape("a/%{\u0000\ufff0\uD83D\uDD12\uDC00")).isEqualTo("a%2F%25%7B%u0000%uFFF0\uD83D\uDD12%uDC00");
        assertThat(escaper.unescape(escaper.escape("a/%{\u0000\ufff0\uDC00"))).isEqualTo("a/%{\u0000\ufff0\uDC00");
    }

    @Test
    void logLinesShowTheStartAndTheLengthOfLongKeys() {
        assertThat(LockKeys.abbreviate("k".repeat(100))).isEqualTo("k".repeat(100));
        assertThat(LockKeys.abbreviate("k".repeat(2_000_000))).isEqualTo("k".repeat(100) + "...(2000000 chars)");
        // A surrogate pair is not cut in half.
        String pairs = "k".repeat(99) + "\uD83D\uDD12".repeat(10);
        assertThat(LockKeys.abbreviate(pairs)).isEqualTo("k".repeat(99) + "...(" + pairs.length() + " chars)");
    }
}
