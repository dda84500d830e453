package io.github.distlock.fault;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The public surface against real etcd with inputs at the edges: invalid keys and settings are
 * rejected with {@link IllegalArgumentException}, any other string is a key of its own (G9),
 * timeouts at the extremes behave like {@link java.util.concurrent.locks.ReentrantLock}'s, and
 * nothing is left behind in etcd.
 */
@FaultInjectionTest
class BadInputIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    /** Bound on a call that must not wait: it may still make a few etcd round trips on a loaded machine. */
    private static final Duration PROMPT = Duration.ofSeconds(5);

    private String namespace;

    private Client client;

    private Client peerClient;

    private Client rawClient;

    private EtcdLockRegistry registry;

    private EtcdLockRegistry peer;

    @BeforeEach
    void setUp() {
        this.namespace = "/fault-input-" + UUID.randomUUID() + "/";
        this.client = etcd.newClient();
        this.peerClient = etcd.newClient();
        this.rawClient = etcd.newClient();
        this.registry = newRegistry(this.client, "main");
        this.peer = newRegistry(this.peerClient, "peer");
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            // Whatever a test did, nothing of it may remain in etcd once its locks are unlocked.
            await().atMost(LONG).untilAsserted(() -> assertThat(keysUnderNamespace()).isEmpty());
        }
        finally {
            this.registry.close();
            this.peer.close();
            this.client.close();
            this.peerClient.close();
            this.rawClient.close();
        }
    }

    private EtcdLockRegistry newRegistry(Client client, String owner) {
        return EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(10))
            .ownerIdentity(owner)
            .requestTimeout(Duration.ofSeconds(5))
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @Test
    void nullAndEmptyKeysAreRejected() {
        for (boolean fair : new boolean[] { false, true }) {
            assertThatThrownBy(() -> this.registry.obtain(null, fair)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null");
            assertThatThrownBy(() -> this.registry.obtain("", fair)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        }
        assertThatThrownBy(() -> this.registry.obtain(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> this.registry.obtain("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void hugeAndBinaryLookingKeysLockAndUnlockAndNeverCollide() throws Exception {
        String big = "k".repeat(64 * 1024);
        List<String> keys = List.of(
                "a", "a/", "/a", "a/b", "a//", "/", "//", "%", "%2F", "%252F", "a%2F", "a%2f",
                "a/0000000000000001_0000000000000001", "a%2F0000000000000001_0000000000000001",
                "0000000000000001_0000000000000001", "a/0000000000000001_0000000000000002",
                "\u0000", "\u0000\u0000", "a\u0000", "a\u0000b", "\u0001\u0002\u0003\t\n\r\u001b\u007f",
                "\r\n", " ", "\u00a0", "\ufeff", "\uffff", "e\u0301", "\u00e9", "\u202eabc", "ключ-🔒", "🔒",
                big, big.substring(1) + "l", "/".repeat(64 * 1024), "%".repeat(64 * 1024));
        assertThat(new HashSet<>(keys)).hasSameSizeAs(keys);

        // Each key locks and unlocks on its own, fair and unfair.
        for (String key : keys) {
            for (boolean fair : new boolean[] { false, true }) {
                FencedLock lock = this.registry.obtain(key, fair);
                assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as(describe(key)).isTrue();
                assertThat(lock.isLockedByCurrentThread()).isTrue();
                assertThat(lock.getKey()).isEqualTo(key);
                lock.unlock();
                assertThat(lock.isLockedByCurrentThread()).isFalse();
            }
        }

        // Held all at once, every key has an entry of its own under a root of its own.
        List<FencedLock> held = new ArrayList<>();
        try {
            for (int i = 0; i < keys.size(); i++) {
                FencedLock lock = this.registry.obtain(keys.get(i), i % 2 == 0);
                lock.lock();
                held.add(lock);
            }
            List<KeyValue> entries = keysUnderNamespace();
            assertThat(entries).hasSameSizeAs(keys);
            Set<String> roots = new HashSet<>();
            for (KeyValue entry : entries) {
                String etcdKey = entry.getKey().toString(StandardCharsets.UTF_8);
                roots.add(etcdKey.substring(0, etcdKey.lastIndexOf('/') + 1));
            }
            assertThat(roots).hasSameSizeAs(keys);
            // Another registry gets none of them while they are held.
            for (String key : keys) {
                FencedLock other = this.peer.obtain(key, false);
                assertThat(other.tryLock()).as("peer acquired held %s", describe(key)).isFalse();
                assertThat(other.isLocked()).isTrue();
            }
        }
        finally {
            held.forEach(FencedLock::unlock);
        }

        // While one key is held, the peer gets every other one.
        for (String heldKey : keys) {
            FencedLock lock = this.registry.obtain(heldKey, true);
            lock.lock();
            try {
                List<String> acquirable = keys.stream().filter((other) -> tryAndRelease(this.peer.obtain(other))).toList();
                assertThat(acquirable).as("keys acquirable while %s is held", describe(heldKey))
                    .containsExactlyElementsOf(keys.stream().filter((other) -> !other.equals(heldKey)).toList());
            }
            finally {
                lock.unlock();
            }
        }
    }

    @Test
    void negativeAndHugeTimeoutsBehaveLikeReentrantLock() throws Exception {
        FencedLock free = this.registry.obtain("free", true);
        // A non-positive timeout is a single attempt: it succeeds on a free lock...
        assertPrompt(() -> assertThat(free.tryLock(-1, TimeUnit.SECONDS)).isTrue());
        // ...and on a lock this thread already holds (reentrancy)...
        assertPrompt(() -> assertThat(free.tryLock(Long.MIN_VALUE, TimeUnit.NANOSECONDS)).isTrue());
        assertThat(free.getHoldCount()).isEqualTo(2);
        free.unlock();
        free.unlock();
        // ...and fails at once on a lock that another holds.
        FencedLock other = this.peer.obtain("free", true);
        assertThat(other.tryLock()).isTrue();
        try {
            for (boolean fair : new boolean[] { false, true }) {
                FencedLock contender = this.registry.obtain("free", fair);
                assertPrompt(() -> assertThat(contender.tryLock(-1, TimeUnit.SECONDS)).isFalse());
                assertPrompt(() -> assertThat(contender.tryLock(0, TimeUnit.NANOSECONDS)).isFalse());
                assertPrompt(() -> assertThat(contender.tryLock(Long.MIN_VALUE, TimeUnit.DAYS)).isFalse());
                assertThat(contender.isLockedByCurrentThread()).isFalse();
            }
        }
        finally {
            other.unlock();
        }
        // A huge timeout on a free lock returns at once, without overflowing into a negative deadline.
        for (boolean fair : new boolean[] { false, true }) {
            FencedLock lock = this.registry.obtain("huge-" + fair, fair);
            assertPrompt(() -> assertThat(lock.tryLock(Long.MAX_VALUE, TimeUnit.NANOSECONDS)).isTrue());
            lock.unlock();
            assertPrompt(() -> assertThat(lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS)).isTrue());
            lock.unlock();
            assertThat(lock.isLockedByCurrentThread()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "PT0S", "PT0.5S", "PT1.5S", "PT-1S", "PT2.001S", "PT0.000000001S" })
    void leaseTtlsThatAreNotWholePositiveSecondsAreRejectedNamingTheValue(String ttl) {
        Duration leaseTtl = Duration.parse(ttl);
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).leaseTtl(leaseTtl))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining(leaseTtl.toString());
    }

    @Test
    void nullLeaseTtlIsRejected() {
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).leaseTtl(null))
            .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "app", "/app", "/app/x", "/app/\\", "/app/ " })
    void namespacesWithoutTrailingSlashAreRejected(String namespace) {
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).namespace(namespace))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("'" + namespace + "'");
    }

    @Test
    void nullNamespaceIsRejected() {
        assertThatThrownBy(() -> EtcdLockRegistry.builder(this.client).namespace(null))
            .isInstanceOf(IllegalArgumentException.class);
    }

    private interface Call {

        void run() throws Exception;
    }

    private static void assertPrompt(Call call) throws Exception {
        long start = System.nanoTime();
        call.run();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PROMPT);
    }

    private static String describe(String key) {
        String shown = (key.length() > 40) ? key.substring(0, 40) + "...(" + key.length() + " chars)" : key;
        StringBuilder escaped = new StringBuilder("key '");
        shown.codePoints().forEach((cp) -> {
            if (cp < 0x20 || cp == 0x7f) {
                escaped.append(String.format("\\u%04x", cp));
            }
            else {
                escaped.appendCodePoint(cp);
            }
        });
        return escaped.append('\'').toString();
    }

    private List<KeyValue> keysUnderNamespace() throws Exception {
        ByteSequence prefix = ByteSequence.from(this.namespace, StandardCharsets.UTF_8);
        return this.rawClient.getKVClient()
            .get(prefix, GetOption.builder().isPrefix(true).build())
            .get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getKvs();
    }
}
