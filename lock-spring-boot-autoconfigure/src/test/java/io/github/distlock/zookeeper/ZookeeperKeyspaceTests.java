package io.github.distlock.zookeeper;

import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/** How lock keys become znodes: valid ZooKeeper paths, one per key, never a nested namespace. */
class ZookeeperKeyspaceTests {

    private final ZookeeperKeyspace keyspace = new ZookeeperKeyspace("/distributed-lock");

    @ParameterizedTest
    @ValueSource(strings = { "order/42", ".", "..", "#", "%2F", "a\u0000b", "\u0007", "\u0085", "\uD83D\uDD12",
            "\uD83D", "\uE000", "\uFFFF", "zookeeper", " ", "ключ" })
    void everyKeyIsOneValidZnodeThatMapsBack(String key) {
        String lockNode = this.keyspace.lockNode(key);
        assertThatNoException().isThrownBy(() -> PathUtils.validatePath(lockNode));
        assertThat(lockNode.substring("/distributed-lock/".length())).doesNotContain("/").startsWith("#");
        assertThat(this.keyspace.lockKeyOf(lockNode.substring("/distributed-lock/".length()))).isEqualTo(key);
        assertThat(this.keyspace.lockNode(key + "x")).isNotEqualTo(lockNode);
    }

    @Test
    void nestedNamespacesAreNotLocks() {
        assertThat(this.keyspace.lockKeyOf("orders")).isNull();
        assertThat(this.keyspace.lockKeyOf("#")).isNull();
        assertThat(this.keyspace.lockKeyOf("#orders")).isEqualTo("orders");
    }

    @Test
    void entriesAreOrderedBySequenceWhateverTheirProtectionPrefix() {
        assertThat(ZookeeperLockStore.sortedEntries(java.util.List.of("_c_b-e-0000000010", "_c_a-e-0000000002",
                "e-0000000007", "not-an-entry"))).containsExactly("_c_a-e-0000000002", "e-0000000007",
                        "_c_b-e-0000000010");
    }

    @Test
    void entriesCreatedAfterTheCounterWrappedComeAfterTheOthersAndStillCount() {
        // ZooKeeper names them %010d of the counter it stopped at, or of one that wrapped past it.
        assertThat(ZookeeperKeyspace.sequenceOf("_c_x-t-e-2147483647")).isEqualTo(Integer.MAX_VALUE);
        assertThat(ZookeeperKeyspace.sequenceOf("_c_x-t-e--2147483648")).isEqualTo(Integer.MIN_VALUE);
        assertThat(ZookeeperKeyspace.sequenceOf("_c_x-t-e--000000005")).isEqualTo(-5);
        assertThat(ZookeeperKeyspace.isOrderedBySequence("_c_x-t-e-2147483646")).isTrue();
        assertThat(ZookeeperKeyspace.isOrderedBySequence("_c_x-t-e-2147483647")).isFalse();
        assertThat(ZookeeperKeyspace.isOrderedBySequence("_c_x-t-e--000000005")).isFalse();
        for (String notAnEntry : new String[] { "t-e--00000005", "t-e-+000000005", "t-e--21474836480", "t-e-9999999999",
                "t-e--9999999999", "t-e---00000005" }) {
            assertThat(ZookeeperKeyspace.sequenceOf(notAnEntry)).as(notAnEntry).isEqualTo(ZookeeperKeyspace.NOT_AN_ENTRY);
        }
        assertThat(ZookeeperKeyspace.isTaggedEntry("_c_x-b123651501f5-e--2147483648", "b123651501f5")).isTrue();
        assertThat(ZookeeperKeyspace.isTaggedEntry("b123651501f5-e--000000005", "b123651501f5")).isTrue();
        assertThat(ZookeeperLockStore.sortedEntries(java.util.List.of("_c_d-e--2147483648", "_c_c-e-2147483647",
                "_c_b-e-2147483646", "_c_a-e-0000000003", "_c_e-e-2147483647"))).containsExactly("_c_a-e-0000000003",
                        "_c_b-e-2147483646", "_c_c-e-2147483647", "_c_d-e--2147483648", "_c_e-e-2147483647");
    }

    @Test
    void anEntryNameTellsWhichRegistryCreatedIt() {
        String entryPath = this.keyspace.entryPath("order/42", "b123651501f5");
        assertThat(entryPath).isEqualTo("/distributed-lock/#order%2F42/b123651501f5-e-");
        String created = "_c_713442c4-b118-480e-8b00-31296102641c-b123651501f5-e-0000000007";
        assertThat(ZookeeperKeyspace.sequenceOf(created)).isEqualTo(7);
        assertThat(ZookeeperKeyspace.isTaggedEntry(created, "b123651501f5")).isTrue();
        assertThat(ZookeeperKeyspace.isTaggedEntry("b123651501f5-e-0000000007", "b123651501f5")).isTrue();
        assertThat(ZookeeperKeyspace.isTaggedEntry(created, "0b123651501f")).isFalse();
        assertThat(ZookeeperKeyspace.isTaggedEntry(created, "23651501f5")).as("a tag that ends another").isFalse();
        assertThat(ZookeeperKeyspace.isTaggedEntry("_c_x-b123651501f5-e-00000007", "b123651501f5"))
            .as("not a sequence").isFalse();
        assertThat(ZookeeperKeyspace.isTaggedEntry("_c_x-e-0000000007", "b123651501f5")).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "relative", "/trailing/", "/a#b", "/a//b", "/a/./b", "/a/../b", "/a\u0001" })
    void badNamespacesAreRejectedWithTheValue(String namespace) {
        assertThatIllegalArgumentException().isThrownBy(() -> new ZookeeperKeyspace(namespace))
            .withMessageStartingWith("ZooKeeper namespace ");
    }
}
