package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;

import io.github.distlock.store.KeyEscaper;
import org.jspecify.annotations.Nullable;

/**
 * Where a namespace's locks live in Redis. A lock's names share the hash tag of its escaped key,
 * so they are in one Cluster slot and one script may touch them all:
 * <ul>
 * <li>{@code <namespace>{<escaped key>}:q}: the queue, a sorted set of entry ids scored by their
 * fence; the oldest live entry holds the lock;</li>
 * <li>{@code <namespace>{<escaped key>}:f}: the fence counter; a fence is the counter plus one or
 * the Redis clock in microseconds, whichever is larger, so fences never go back after the counter
 * expired, was lost in a restart, or lags on a promoted replica;</li>
 * <li>{@code <namespace>{<escaped key>}:e:<entry id>}: one entry's liveness key, expiring after
 * the lease TTL unless its registry renews it; its value names the writer ({@code owner},
 * {@code thread}, epoch milliseconds, one per line).</li>
 * </ul>
 * Handovers are published on the channel {@code <namespace>handover} with the id of the entry
 * that now holds, and {@code +} with the holder's id when entries are queued behind it. In the
 * escaped key {@code %}, <code>{</code> and <code>}</code> become
 * {@code %25}, {@code %7B} and {@code %7D} and lone surrogates {@code %uXXXX}, so the hash tag
 * ends at the first <code>}</code> and no two keys share names. Namespaces contain no braces, so
 * a namespace ends at the first <code>{</code> and nested namespaces never see each other's locks.
 */
final class RedisKeyspace {

    private static final KeyEscaper ESCAPER = new KeyEscaper("{}");

    private static final String QUEUE_SUFFIX = "}:q";

    private final String namespace;

    private final long namespaceSize;

    RedisKeyspace(String namespace) {
        String problem = namespaceProblem(namespace);
        if (problem != null) {
            throw new IllegalArgumentException("Redis namespace " + problem);
        }
        this.namespace = namespace;
        this.namespaceSize = namespace.getBytes(StandardCharsets.UTF_8).length;
    }

    static @Nullable String namespaceProblem(@Nullable String namespace) {
        if (namespace == null || namespace.isEmpty()) {
            return "must not be empty";
        }
        if (namespace.indexOf('{') >= 0 || namespace.indexOf('}') >= 0) {
            return "must not contain '{' or '}' (they mark the hash tag of each lock key), but was '" + namespace + "'";
        }
        for (int i = 0; i < namespace.length(); i++) {
            char c = namespace.charAt(i);
            if (Character.isISOControl(c) || Character.isSurrogate(c)) {
                return "must not contain control characters or lone surrogates, but was '"
                        + namespace.replace("\n", "\\n").replace("\r", "\\r") + "'";
            }
        }
        return null;
    }

    String namespace() {
        return this.namespace;
    }

    /** @return the length of the common start of the lock's names (see {@link #base}) in UTF-8 bytes */
    long baseSize(String lockKey) {
        return this.namespaceSize + ESCAPER.escapedSize(lockKey) + 2;
    }

    /** The common start of a lock's names: {@code <namespace>{<escaped key>}}. */
    private String base(String lockKey) {
        return this.namespace + '{' + ESCAPER.escape(lockKey) + '}';
    }

    String queue(String lockKey) {
        return base(lockKey) + ":q";
    }

    String fenceCounter(String lockKey) {
        return base(lockKey) + ":f";
    }

    /** Entry keys are this prefix plus the entry id. */
    String entryPrefix(String lockKey) {
        return base(lockKey) + ":e:";
    }

    /** @return the names of one lock, escaped once */
    LockNames namesOf(String lockKey) {
        String base = base(lockKey);
        return new LockNames(base + ":q", base + ":f", base + ":e:");
    }

    /** The names of one lock: its queue, its fence counter, and the prefix of its entry keys. */
    record LockNames(String queue, String counter, String entryPrefix) {
    }

    String channel() {
        return this.namespace + "handover";
    }

    /** A {@code SCAN MATCH} pattern for the queues of this namespace, and of no other. */
    String queuePattern() {
        StringBuilder pattern = new StringBuilder();
        for (char c : this.namespace.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                pattern.append('\\');
            }
            pattern.append(c);
        }
        return pattern.append("{*").append(QUEUE_SUFFIX).toString();
    }

    /**
     * @param queue a name {@link #queuePattern()} matched
     * @return its lock key, or {@code null} if the name is not a queue of this namespace
     */
    @Nullable String lockKeyOf(String queue) {
        int start = this.namespace.length() + 1;
        if (!queue.startsWith(this.namespace + '{') || !queue.endsWith(QUEUE_SUFFIX)
                || queue.length() < start + QUEUE_SUFFIX.length()) {
            return null;
        }
        String escaped = queue.substring(start, queue.length() - QUEUE_SUFFIX.length());
        return (!escaped.isEmpty() && escaped.indexOf('}') < 0) ? ESCAPER.unescape(escaped) : null;
    }
}
