package io.github.distlock.etcd;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import io.etcd.jetcd.ByteSequence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

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

    /** Processes of two versions share the keys during a rolling upgrade: the entry id keeps its layout. */
    @Test
    void anEntryIdIsTheLeaseAndTheSequenceInSixteenHexDigitsEach() {
        ByteSequence root = this.keyspace.root("42");
        assertThat(EtcdKeyspace.entry(root, 0x694dL, 1))
            .isEqualTo(root.concat(EtcdKeyspace.bytes("000000000000694d_0000000000000001")));
        assertThat(EtcdKeyspace.entry(root, -1L, Long.MIN_VALUE))
            .isEqualTo(root.concat(EtcdKeyspace.bytes(String.format("%016x_%016x", -1L, Long.MIN_VALUE))));
    }

    @Test
    void entryKeysAreFoundBehindAClientsNamespace() {
        ByteSequence entry = EtcdKeyspace.entry(this.keyspace.root("42"), 0x694dL, 1);
        assertThat(this.keyspace.entryKeyIn(entry)).isEqualTo(entry);
        assertThat(this.keyspace.entryKeyIn(EtcdKeyspace.bytes("/app/").concat(entry))).isEqualTo(entry);
        // A client namespace that is itself like a lock root: the entry key is what follows it.
        assertThat(this.keyspace.entryKeyIn(EtcdKeyspace.bytes("/locks/#x/").concat(entry))).isEqualTo(entry);
        assertThat(this.keyspace.entryKeyIn(EtcdKeyspace.bytes("/app/locks/#a/"))).isNull();
        assertThat(this.keyspace.entryKeyIn(EtcdKeyspace.bytes("/app/other/#a/b"))).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = { "/locks/#a", "/locks/#a//", "/locks/#a//x", "/locks/#a/x/", "/locks/#a/x/y/z",
            "/locks//#a/x", "/locks/#/", "/locks/#//" })
    void keysWithMissingOrExtraSlashesAreNotEntries(String etcdKey) {
        assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes(etcdKey))).isNull();
    }

    @Test
    void anyEntryIdWithoutASlashBelongsToTheRootBeforeIt() {
        for (String entryId : List.of("x", "#", "%2F", "0000000000000001_0000000000000002", "\u0000")) {
            assertThat(this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/##a%2Fb/" + entryId)))
                .isEqualTo(this.keyspace.root("#a/b"));
        }
    }

    @Test
    void nestedAndSiblingNamespacesNeverSeeEachOthersEntries() {
        List<EtcdKeyspace> namespaces = List.of(new EtcdKeyspace("/"), this.keyspace, new EtcdKeyspace("/locks/orders/"),
                new EtcdKeyspace("/locks/orders/eu/"), new EtcdKeyspace("/locks/%23/"), new EtcdKeyspace("/locks2/"),
                new EtcdKeyspace("/ключ/"));
        for (EtcdKeyspace writer : namespaces) {
            for (EtcdKeyspace reader : namespaces) {
                if (writer == reader) {
                    continue;
                }
                for (String key : KEYS) {
                    ByteSequence entry = EtcdKeyspace.entry(writer.root(key), 1, 1);
                    assertThat(entry.startsWith(reader.locksPrefix()))
                        .as("%s in %s seen by %s", escapedForHumans(key), writer.namespace(), reader.namespace())
                        .isFalse();
                    assertThat(reader.rootOf(entry)).isNull();
                }
            }
        }
    }

    @Test
    void randomKeysMapToLosslessRootsAndBack() {
        Random random = new Random(20240613);
        for (int i = 0; i < 20_000; i++) {
            String key = randomKey(random);
            ByteSequence root = this.keyspace.root(key);
            assertThat(EtcdKeyspace.escape(key)).doesNotContain("/");
            assertThat(EtcdKeyspace.bytes(EtcdKeyspace.text(root))).as("UTF-8 of %s", escapedForHumans(key))
                .isEqualTo(root);
            assertThat(this.keyspace.lockKeyOf(root)).isEqualTo(key);
            assertThat(this.keyspace.rootOf(EtcdKeyspace.entry(root, random.nextLong(), random.nextLong())))
                .isEqualTo(root);
        }
    }

    @Test
    void everyKeyOfUpToFourPiecesHasItsOwnRootAndNoRootIsAPrefixOfAnother() {
        List<String> pieces = List.of("a", "/", "%", "%2F", "%25", "%u", "%uD800", "\uD800", "\uDC00", "\uD83D\uDD12",
                "#", "?");
        Set<String> keys = new LinkedHashSet<>(pieces);
        for (int length = 2; length <= 4; length++) {
            for (String shorter : List.copyOf(keys)) {
                for (String piece : pieces) {
                    keys.add(shorter + piece);
                }
            }
        }
        List<byte[]> roots = new ArrayList<>(keys.size());
        keys.forEach(key -> roots.add(this.keyspace.root(key).getBytes()));
        roots.sort(Arrays::compareUnsigned);
        // Sorted, a root that is a prefix of another is also a prefix of the one right after it.
        for (int i = 1; i < roots.size(); i++) {
            byte[] previous = roots.get(i - 1);
            byte[] next = roots.get(i);
            assertThat(Arrays.equals(previous, next) || (next.length >= previous.length
                    && Arrays.equals(previous, 0, previous.length, next, 0, previous.length)))
                .as("%s and %s", EtcdKeyspace.text(ByteSequence.from(previous)), EtcdKeyspace.text(ByteSequence.from(next)))
                .isFalse();
        }
        assertThat(keys).hasSizeGreaterThan(10_000);
    }

    @Test
    void readsRootsWrittenBySomethingElseWithoutFailing() {
        for (String foreign : List.of("%uZZZZ", "%u12G4")) {
            ByteSequence root = this.keyspace.rootOf(EtcdKeyspace.bytes("/locks/#" + foreign + "/x"));
            assertThat(root).isNotNull();
            assertThatNoException().isThrownBy(() -> this.keyspace.lockKeyOf(root));
        }
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

    /** One to twelve chars, mixing escape look-alikes, lone and paired surrogates and any UTF-16 unit. */
    private static String randomKey(Random random) {
        String tricky = "/%#u2F5D8Cc0?\uD800\uDBFF\uDC00\uDFFF\u0000\n";
        StringBuilder key = new StringBuilder();
        int length = 1 + random.nextInt(12);
        for (int i = 0; i < length; i++) {
            key.append(random.nextBoolean() ? tricky.charAt(random.nextInt(tricky.length()))
                    : (char) random.nextInt(Character.MAX_VALUE + 1));
        }
        return key.toString();
    }

    private static String escapedForHumans(String key) {
        StringBuilder text = new StringBuilder();
        key.chars().forEach(c -> text.append((c < 0x20 || c > 0x7e) ? String.format("\\u%04X", c) : (char) c));
        return text.toString();
    }
}
