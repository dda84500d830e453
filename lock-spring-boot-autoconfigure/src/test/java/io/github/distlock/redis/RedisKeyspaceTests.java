package io.github.distlock.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** How lock keys become Redis names: one hash tag per lock, distinct keys never share a name. */
class RedisKeyspaceTests {

    private final RedisKeyspace keyspace = new RedisKeyspace("distributed-lock:");

    @Test
    void namesOfOneLockShareTheHashTagOfItsEscapedKey() {
        assertThat(this.keyspace.queue("orders/42")).isEqualTo("distributed-lock:{orders/42}:q");
        assertThat(this.keyspace.fenceCounter("orders/42")).isEqualTo("distributed-lock:{orders/42}:f");
        assertThat(this.keyspace.entryPrefix("orders/42")).isEqualTo("distributed-lock:{orders/42}:e:");
        assertThat(this.keyspace.channel()).isEqualTo("distributed-lock:handover");
    }

    @ParameterizedTest
    @ValueSource(strings = { "a}", "{a}", "}:q", "a%7D", "%", "%25", "\uD83D", "\uDD12", "?", "a\uD83D\uDD12b",
            "*", "[x]", "\\", "a b\nc" })
    void everyKeyMapsToItsOwnHashTagAndBack(String key) {
        String queue = this.keyspace.queue(key);
        String tag = queue.substring(queue.indexOf('{') + 1, queue.indexOf('}'));
        // Redis hashes what is between the first '{' and the next '}': the whole escaped key.
        assertThat(queue).endsWith(tag + "}:q");
        assertThat(this.keyspace.lockKeyOf(queue)).isEqualTo(key);
        assertThat(this.keyspace.queue(key + "x")).isNotEqualTo(queue);
    }

    @Test
    void keysThatUtf8WouldMergeStayApart() {
        assertThat(this.keyspace.queue("a\uD800")).isNotEqualTo(this.keyspace.queue("a?"))
            .isNotEqualTo(this.keyspace.queue("a\uDC00"));
    }

    @Test
    void theQueuePatternMatchesOnlyThisNamespacesQueues() {
        RedisKeyspace glob = new RedisKeyspace("app*[1]?:");
        assertThat(glob.queuePattern()).isEqualTo("app\\*\\[1\\]\\?:{*}:q");
        assertThat(this.keyspace.lockKeyOf("distributed-lock:orders:{x}:q")).isNull();
        assertThat(new RedisKeyspace("distributed-lock:orders:").lockKeyOf("distributed-lock:{x}:q")).isNull();
        assertThat(this.keyspace.lockKeyOf("distributed-lock:{}:q")).isNull();
        assertThat(this.keyspace.lockKeyOf("distributed-lock:{a}b}:q")).isNull();
        assertThat(this.keyspace.lockKeyOf("distributed-lock:{a}:f")).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "locks{", "locks}:", "a\nb:" })
    void namespacesThatWouldBreakTheHashTagAreRejected(String namespace) {
        assertThat(RedisKeyspace.namespaceProblem(namespace)).isNotNull();
        assertThatIllegalArgumentException().isThrownBy(() -> new RedisKeyspace(namespace))
            .withMessageStartingWith("Redis namespace ");
    }
}
