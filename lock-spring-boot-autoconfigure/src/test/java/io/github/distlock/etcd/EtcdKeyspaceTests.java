package io.github.distlock.etcd;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.etcd.jetcd.ByteSequence;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The mapping from lock keys to etcd keys, without etcd. */
class EtcdKeyspaceTests {

    private static final List<String> KEYS = List.of("a", "a/", "/a", "a/b", "a//", "/", "%", "%2F", "%25", "%2f",
            "%u", "%uD800", "a\uD800", "a\uDC00", "a?", "\uDC00\uD800", "\uD83D\uDD12", "\uD83D", "\uDD12", "#", "a#b",
            "#/", "\u0000", "e\u0301", "\u00e9", "ключ");

    private final EtcdKeyspace keyspace = new EtcdKeyspace("/locks/");

    @Test
    void everyDistinctKeyHasADistinctRootThatMapsBackToIt() {
        Set<ByteSequence> roots = new HashSet<>();
        for (String key : KEYS) {
            ByteSequence root = this.keyspace.root(key);
            assertThat(roots.add(root)).as("root of %s is unique", escapedForHumans(key)).isTrue();
            assertThat(this.keyspace.lockKeyOf(root)).isEqualTo(key);
            ByteSequence entry = EtcdKeyspace.entry(root, 0x694dL, 1);
            assertThat(this.keyspace.rootOf(entry)).isEqualTo(root);
        }
    }

    @Test
    void noRootIsAPrefixOfAnotherRoot() {
        for (String key : KEYS) {
            for (String other : KEYS) {
                if (!key.equals(other)) {
                    assertThat(this.keyspace.root(other).startsWith(this.keyspace.root(key)))
                        .as("%s under %s", escapedForHumans(other), escapedForHumans(key))
                        .isFalse();
                }
            }
        }
    }

    @Test
    void entriesOfANestedNamespaceAreNotEntriesOfTheOuterOneAndViceVersa() {
        EtcdKeyspace nested = new EtcdKeyspace("/locks/orders/");
        ByteSequence nestedEntry = EtcdKeyspace.entry(nested.root("42"), 1, 1);
        assertThat(this.keyspace.rootOf(nestedEntry)).isNull();
        assertThat(nestedEntry.startsWith(this.keyspace.locksPrefix())).isFalse();
        assertThat(nestedEntry.startsWith(this.keyspace.root("orders"))).isFalse();
        ByteSequence outerEntry = EtcdKeyspace.entry(this.keyspace.root("orders"), 1, 1);
        assertThat(nested.rootOf(outerEntry)).isNull();
        assertThat(outerEntry.startsWith(nested.locksPrefix())).isFalse();
    }

    @Test
    void keysThatAreNotEntriesHaveNoRoot() {
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/"))).isNull();
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/#"))).isNull();
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/#a/"))).isNull();
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/#/x"))).isNull();
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/#a/b/c"))).isNull();
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/other/#a/b"))).isNull();
    }

    @Test
    void namespacesMustEndWithASlashAndHoldNoMarker() {
        assertThat(EtcdKeyspace.namespaceProblem("/locks/")).isNull();
        assertThat(EtcdKeyspace.namespaceProblem("/locks")).contains("must end with '/'");
        assertThat(EtcdKeyspace.namespaceProblem(null)).contains("must end with '/'");
        assertThat(EtcdKeyspace.namespaceProblem("/a#b/")).contains("must not contain '#'");
        assertThatIllegalArgumentException().isThrownBy(() -> new EtcdKeyspace("/a#/"))
            .withMessageContaining("'/a#/'");
    }

    private static String escapedForHumans(String key) {
        StringBuilder text = new StringBuilder();
        key.chars().forEach(c -> text.append((c < 0x20 || c > 0x7e) ? String.format("\\u%04X", c) : (char) c));
        return text.toString();
    }
}
