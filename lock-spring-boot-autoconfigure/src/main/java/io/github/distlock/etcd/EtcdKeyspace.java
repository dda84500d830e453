package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import io.etcd.jetcd.ByteSequence;
import io.github.distlock.store.KeyEscaper;
import org.jspecify.annotations.Nullable;

/**
 * Maps lock keys to etcd keys.
 *
 * <p>A lock's entries live under its root {@code <namespace>#<escaped key>/}; each queue entry is
 * {@code <root><lease id hex>_<sequence hex>}. The escaping is injective and leaves no {@code /}
 * in the escaped key: {@code %} becomes {@code %25}, {@code /} becomes {@code %2F}, and a lone
 * UTF-16 surrogate (which UTF-8 cannot encode) becomes {@code %uXXXX}. So no lock's root is a
 * prefix of another's, and every distinct Java string has a root of its own.
 *
 * <p>Namespaces never interfere, nested or not: namespaces may not contain {@code #}, and every
 * root starts with the namespace followed by {@code #}. A nested namespace ({@code /a/} and
 * {@code /a/orders/}) therefore never starts with a root of the outer one, and no key of the
 * nested one starts with {@code /a/#}: prefix reads and the watch of one namespace see only its
 * own entries.
 */
final class EtcdKeyspace {

    /** Separates the namespace from the escaped lock key; forbidden in namespaces. */
    private static final char LOCK_MARKER = '#';

    /** The escaped key has no '/': the first one after the marker ends the root. */
    private static final KeyEscaper ESCAPER = new KeyEscaper("/");

    private static final HexFormat HEX = HexFormat.of();

    private final String namespace;

    private final ByteSequence locksPrefix;

    EtcdKeyspace(String namespace) {
        String problem = namespaceProblem(namespace);
        if (problem != null) {
            throw new IllegalArgumentException("etcd namespace " + problem);
        }
        this.namespace = namespace;
        this.locksPrefix = bytes(namespace + LOCK_MARKER);
    }

    /**
     * Why {@code namespace} cannot be used, or {@code null} if it can.
     * @return a sentence fragment such as "must end with '/' ..., but was 'x'"
     */
    static @Nullable String namespaceProblem(@Nullable String namespace) {
        if (namespace == null || !namespace.endsWith("/")) {
            // Without the separator, lock '2x' in 'app' and lock 'x' in 'app2' would share a root.
            return "must end with '/', but was '" + namespace + "'";
        }
        if (!StandardCharsets.UTF_8.newEncoder().canEncode(namespace)) {
            return "must be valid Unicode (it has a lone surrogate), but was '" + namespace + "'";
        }
        if (namespace.indexOf(LOCK_MARKER) >= 0) {
            return "must not contain '" + LOCK_MARKER + "' (it separates namespaces from lock keys, so that "
                    + "nested namespaces never share entries), but was '" + namespace + "'";
        }
        return null;
    }

    String namespace() {
        return this.namespace;
    }

    /** The prefix of every entry key of this namespace, and of nothing else. */
    ByteSequence locksPrefix() {
        return this.locksPrefix;
    }

    /** @return the length of {@link #root root(lockKey)} in bytes */
    long rootSize(String lockKey) {
        // The namespace, the marker, the escaped key and the closing '/'.
        return this.locksPrefix.size() + ESCAPER.escapedSize(lockKey) + 1;
    }

    ByteSequence root(String lockKey) {
        return bytes(this.namespace + LOCK_MARKER + escape(lockKey) + '/');
    }

    static ByteSequence entry(ByteSequence root, long leaseId, long sequence) {
        return root.concat(bytes(entryIdOfLease(leaseId) + HEX.toHexDigits(sequence)));
    }

    /** The start of every {@link #entry entry key} of {@code root} under the lease {@code leaseId}. */
    static ByteSequence entryPrefix(ByteSequence root, long leaseId) {
        return root.concat(bytes(entryIdOfLease(leaseId)));
    }

    /** The lease's part of an entry id: ids are "%016x_%016x" (lease, sequence), without parsing a format. */
    private static String entryIdOfLease(long leaseId) {
        return HEX.toHexDigits(leaseId) + '_';
    }

    /**
     * Returns the root that {@code etcdKey} is an entry of, or {@code null} if it is not an entry
     * key of this namespace.
     */
    @Nullable ByteSequence rootOf(ByteSequence etcdKey) {
        if (!etcdKey.startsWith(this.locksPrefix)) {
            return null;
        }
        byte[] key = etcdKey.getBytes();
        // The escaped key has no '/': the first one ends the root, and the entry id has none.
        for (int i = this.locksPrefix.size(); i < key.length - 1; i++) {
            if (key[i] == '/') {
                for (int j = i + 1; j < key.length; j++) {
                    if (key[j] == '/') {
                        return null;
                    }
                }
                return (i > this.locksPrefix.size()) ? etcdKey.substring(0, i + 1) : null;
            }
        }
        return null;
    }

    /**
     * The entry key of this namespace that a key as etcd stores it stands for, or {@code null}.
     * Lease reads name a lease's keys as stored, with the client's own namespace (if it was built
     * with one) in front, while KV reads name them without it; the namespace is not known here, so
     * the first entry key found at the end of {@code storedKey} is taken.
     */
    @Nullable ByteSequence entryKeyIn(ByteSequence storedKey) {
        for (int start = 0; start + this.locksPrefix.size() <= storedKey.size(); start++) {
            ByteSequence candidate = (start == 0) ? storedKey : storedKey.substring(start);
            if (candidate.startsWith(this.locksPrefix) && rootOf(candidate) != null) {
                return candidate;
            }
        }
        return null;
    }

    /** The lock key whose root is {@code root}: the inverse of {@link #root(String)}. */
    String lockKeyOf(ByteSequence root) {
        return unescape(text(root.substring(this.locksPrefix.size(), root.size() - 1)));
    }

    static String escape(String lockKey) {
        return ESCAPER.escape(lockKey);
    }

    static String unescape(String escaped) {
        return ESCAPER.unescape(escaped);
    }

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
