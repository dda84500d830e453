package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;

import io.etcd.jetcd.ByteSequence;

/**
 * Maps lock keys to etcd keys.
 *
 * <p>A lock's entries live under its root {@code <namespace><escaped key>/}; each queue entry is
 * {@code <root><lease id hex>_<sequence hex>}. Escaping {@code %} as {@code %25} and {@code /} as
 * {@code %2F} is injective and leaves no {@code /} in the escaped key, so no lock's root is a
 * prefix of another's and a prefix read of a root sees exactly that lock's entries.
 */
final class EtcdKeyspace {

    private final String namespace;

    private final ByteSequence namespaceBytes;

    EtcdKeyspace(String namespace) {
        if (namespace == null || !namespace.endsWith("/")) {
            // Without the separator, lock '2x' in 'app' and lock 'x' in 'app2' would share a root.
            throw new IllegalArgumentException("etcd namespace must end with '/', but was '" + namespace + "'");
        }
        this.namespace = namespace;
        this.namespaceBytes = bytes(namespace);
    }

    String namespace() {
        return this.namespace;
    }

    ByteSequence namespacePrefix() {
        return this.namespaceBytes;
    }

    ByteSequence root(String lockKey) {
        return bytes(this.namespace + escape(lockKey) + '/');
    }

    static ByteSequence entry(ByteSequence root, long leaseId, long sequence) {
        return root.concat(bytes(String.format("%016x_%016x", leaseId, sequence)));
    }

    /**
     * Returns the root that {@code etcdKey} is an entry of, or {@code null} if it is not an entry
     * key of this namespace.
     */
    ByteSequence rootOf(ByteSequence etcdKey) {
        if (!etcdKey.startsWith(this.namespaceBytes)) {
            return null;
        }
        byte[] key = etcdKey.getBytes();
        for (int i = key.length - 1; i >= this.namespaceBytes.size(); i--) {
            if (key[i] == '/') {
                return etcdKey.substring(0, i + 1);
            }
        }
        return null;
    }

    /** The lock key whose root is {@code root}: the inverse of {@link #root(String)}. */
    String lockKeyOf(ByteSequence root) {
        String escaped = text(root).substring(this.namespace.length(), text(root).length() - 1);
        StringBuilder key = new StringBuilder(escaped.length());
        for (int i = 0; i < escaped.length(); i++) {
            if (escaped.startsWith("%2F", i)) {
                key.append('/');
                i += 2;
            }
            else if (escaped.startsWith("%25", i)) {
                key.append('%');
                i += 2;
            }
            else {
                key.append(escaped.charAt(i));
            }
        }
        return key.toString();
    }

    static String escape(String lockKey) {
        StringBuilder escaped = new StringBuilder(lockKey.length() + 8);
        for (int i = 0; i < lockKey.length(); i++) {
            char c = lockKey.charAt(i);
            switch (c) {
                case '%' -> escaped.append("%25");
                case '/' -> escaped.append("%2F");
                default -> escaped.append(c);
            }
        }
        return escaped.toString();
    }

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
