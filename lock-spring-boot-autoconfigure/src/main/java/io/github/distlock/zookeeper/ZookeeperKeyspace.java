package io.github.distlock.zookeeper;

import java.nio.charset.StandardCharsets;

import io.github.distlock.store.KeyEscaper;
import org.jspecify.annotations.Nullable;

/**
 * Where a namespace's locks live in ZooKeeper: one container node {@code <namespace>/#<escaped key>}
 * per lock, holding one ephemeral sequential entry per acquisition ({@code <tag>-e-<sequence>}, where
 * the tag marks the registry that created it; Curator's protection prefix goes before it). The
 * oldest entry holds; its creation zxid is its fence (a sequence restarts when ZooKeeper removes an
 * empty container, a zxid never does).
 *
 * <p>Sequences give the age of entries until a lock node has had {@value Integer#MAX_VALUE}
 * children created in it (a lock held for years while others poll it): from then on ZooKeeper 3.9
 * names every new child with that sequence, or, while creates are pipelined, with negative ones
 * ({@code %010d} of a wrapped counter, so {@code -2147483648} has eleven characters). Such entries
 * are {@linkplain #isOrderedBySequence not ordered by their sequence}: they come after every entry
 * that is, and among themselves only their creation zxids order them.
 *
 * <p>In the escaped key {@code %}, {@code /} and {@code #} become {@code %25}, {@code %2F} and
 * {@code %23}, and every character ZooKeeper refuses in a path (controls, surrogates, private use,
 * U+FFF0 and above) becomes {@code %uXXXX}. Lock nodes start with {@code #} and namespaces may not
 * contain it, so a namespace nested in another ({@code /distributed-lock/orders} in
 * {@code /distributed-lock}) is never taken for a lock of the outer one.
 */
final class ZookeeperKeyspace {

    static final String LOCK_MARKER = "#";

    static final String ENTRY_PREFIX = "e-";

    /** ZooKeeper appends a sequential node's counter as ten digits, or a minus and nine or ten digits. */
    private static final int SEQUENCE_DIGITS = 10;

    /** What {@link #sequenceOf} returns for a child that is not an entry. */
    static final long NOT_AN_ENTRY = Long.MIN_VALUE;

    private static final KeyEscaper ESCAPER = new KeyEscaper("/#", ZookeeperKeyspace::refusedByZookeeper);

    private final String namespace;

    /** The UTF-8 bytes of a lock node's path besides the escaped key: the namespace and {@code /#}. */
    private final long lockNodeOverhead;

    ZookeeperKeyspace(String namespace) {
        String problem = namespaceProblem(namespace);
        if (problem != null) {
            throw new IllegalArgumentException("ZooKeeper namespace " + problem);
        }
        this.namespace = namespace;
        this.lockNodeOverhead = (namespace + "/" + LOCK_MARKER).getBytes(StandardCharsets.UTF_8).length;
    }

    /** What ZooKeeper's path validation refuses, besides '/'. */
    static boolean refusedByZookeeper(int c) {
        return c == 0 || (c > '\u0000' && c <= '\u001f') || (c >= '\u007f' && c <= '\u009f')
                || (c >= '\ud800' && c <= '\uf8ff') || c >= '\ufff0';
    }

    static @Nullable String namespaceProblem(@Nullable String namespace) {
        if (namespace == null || !namespace.startsWith("/") || namespace.length() < 2 || namespace.endsWith("/")) {
            return "must be an absolute path such as /distributed-lock, without a trailing '/', but was '"
                    + namespace + "'";
        }
        if (namespace.contains(LOCK_MARKER)) {
            return "must not contain '#' (it marks lock nodes), but was '" + namespace + "'";
        }
        if (namespace.contains("//")) {
            return "must not contain empty path elements, but was '" + namespace + "'";
        }
        for (String element : namespace.substring(1).split("/")) {
            if (element.equals(".") || element.equals("..")) {
                return "must not contain '.' or '..' elements, but was '" + namespace + "'";
            }
        }
        for (int i = 0; i < namespace.length(); i++) {
            if (refusedByZookeeper(namespace.charAt(i))) {
                return "must not contain characters ZooKeeper refuses in paths, but was '"
                        + namespace.replace("\n", "\\n") + "'";
            }
        }
        return null;
    }

    String namespace() {
        return this.namespace;
    }

    /** @return the container node of the lock */
    String lockNode(String lockKey) {
        return this.namespace + "/" + LOCK_MARKER + ESCAPER.escape(lockKey);
    }

    /** @return the length of {@link #lockNode lockNode(lockKey)} in UTF-8 bytes, as requests carry it */
    long lockNodeSize(String lockKey) {
        return this.lockNodeOverhead + ESCAPER.escapedSize(lockKey);
    }

    /**
     * @param tag the creating registry's mark, so that it can recognise its own entries in a queue
     * @return the path an entry is created at (ZooKeeper appends the sequence)
     */
    String entryPath(String lockKey, String tag) {
        return lockNode(lockKey) + "/" + tag + "-" + ENTRY_PREFIX;
    }

    /**
     * @param child a child of a lock node
     * @return whether it is an entry created with {@code tag} (see {@link #entryPath})
     */
    static boolean isTaggedEntry(String child, String tag) {
        if (sequenceOf(child) == NOT_AN_ENTRY) {
            return false;
        }
        int at = child.lastIndexOf(ENTRY_PREFIX) - tag.length() - 1;
        return at >= 0 && child.startsWith(tag + "-", at) && (at == 0 || child.charAt(at - 1) == '-');
    }

    /**
     * @param child a child of the namespace node
     * @return its lock key, or {@code null} if it is not a lock node (a nested namespace, say)
     */
    @Nullable String lockKeyOf(String child) {
        return (child.startsWith(LOCK_MARKER) && child.length() > 1) ? ESCAPER.unescape(child.substring(1)) : null;
    }

    /**
     * @param child a child of a lock node
     * @return its sequence number (negative once the lock node's counter wrapped), or
     * {@link #NOT_AN_ENTRY} if it is not an entry
     */
    static long sequenceOf(String child) {
        int marker = child.lastIndexOf(ENTRY_PREFIX);
        if (marker < 0) {
            return NOT_AN_ENTRY;
        }
        String sequence = child.substring(marker + ENTRY_PREFIX.length());
        boolean negative = sequence.startsWith("-");
        if (negative ? sequence.length() != SEQUENCE_DIGITS && sequence.length() != SEQUENCE_DIGITS + 1
                : sequence.length() != SEQUENCE_DIGITS) {
            return NOT_AN_ENTRY;
        }
        for (int i = negative ? 1 : 0; i < sequence.length(); i++) {
            if (sequence.charAt(i) < '0' || sequence.charAt(i) > '9') {
                return NOT_AN_ENTRY;
            }
        }
        long parsed = Long.parseLong(sequence);
        return (parsed >= Integer.MIN_VALUE && parsed <= Integer.MAX_VALUE) ? parsed : NOT_AN_ENTRY;
    }

    /**
     * @param child an entry
     * @return whether its sequence gives its age: false for an entry created once the lock node's
     * counter had reached {@value Integer#MAX_VALUE} (see the class description)
     */
    static boolean isOrderedBySequence(String child) {
        long sequence = sequenceOf(child);
        return sequence >= 0 && sequence < Integer.MAX_VALUE;
    }
}
