package io.github.distlock.etcd;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.HeldGrpcCall;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * An entry write is sent again after an attempt's time without an answer, so etcd may apply an
 * earlier attempt long after its acquisition was served by a later one: a member frozen with the
 * request, a slow path. Applied after the entry's key was deleted, it writes the key again under
 * the live session lease, and no acquisition owns it. Such a key is deleted as soon as its answer
 * shows it, and swept from the lease while any attempt has no answer, so it never holds up the
 * lock's queue. The late attempt is held in the client's gRPC pipeline ({@link HeldGrpcCall}),
 * so that exactly the first attempt of the write comes late.
 */
class LateEntryWriteIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    /** How long a later acquisition may wait for the key: a few ghost sweeps. */
    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    /**
     * The ghost sweep's window after a failed write attempt, shortened from a minute: the test
     * waits past it, and what it proves does not depend on its length.
     */
    private static final Duration SWEEP_WINDOW = Duration.ofSeconds(5);

    private String namespace;

    private String key;

    private Client rawClient;

    private Client peerClient;

    private EtcdLockRegistry peer;

    @BeforeAll
    static void shortenSweepWindow() {
        EntryCleanup.ghostSweepWindowNanos = SWEEP_WINDOW.toNanos();
    }

    @AfterAll
    static void restoreSweepWindow() {
        EntryCleanup.ghostSweepWindowNanos = EntryCleanup.GHOST_SWEEP_WINDOW_NANOS;
    }

    @BeforeEach
    void setUp(TestInfo test) {
        this.namespace = "/late-" + UUID.randomUUID() + "/";
        this.key = test.getTestMethod().orElseThrow().getName();
        this.rawClient = etcd.newClient();
        this.peerClient = etcd.newClient();
        this.peer = registry(this.peerClient, "peer");
    }

    @AfterEach
    void tearDown() {
        this.peer.close();
        this.peerClient.close();
        this.rawClient.close();
    }

    /**
     * The late attempt reaches etcd more than the ghost sweep's old window (a minute after the
     * write was sent again; {@link #SWEEP_WINDOW} here) after the release, and its answer stays
     * out: only a sweep while it has no answer finds the key.
     */
    @Test
    void aWriteAttemptAppliedLongAfterTheReleaseIsSweptWhileItsAnswerIsOutstanding() throws Exception {
        HeldGrpcCall late = holdFirstEntryWrite();
        try (Client client = clientThrough(late); EtcdLockRegistry me = registry(client, "me")) {
            FencedLock lock = me.obtain(this.key);
            lock.lock();
            // Returns after the write was sent again: its first attempt is held.
            long sentAgain = System.nanoTime();
            late.awaitHeld(LONG);
            lock.unlock();
            assertThat(entries()).isEmpty();
            long pastOldWindow = sentAgain + EntryCleanup.ghostSweepWindowNanos + TimeUnit.SECONDS.toNanos(2);
            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> System.nanoTime() - pastOldWindow >= 0);
            long before = currentRevision();
            try (EntryEvents events = EntryEvents.after(this.rawClient, root(), before)) {
                late.deliverRequest();
                KeyValue ghost = events.awaitPut(LONG);
                assertThat(ghost.getLease()).as("written under the live session lease").isEqualTo(me.liveLeaseId());

                FencedLock next = this.peer.obtain(this.key);
                // Before, nothing swept the lease any more: the key held the lock until the session ended.
                assertThat(next.tryLock(PROMPTLY.toSeconds(), TimeUnit.SECONDS)).as("acquired past the late write")
                    .isTrue();
                next.unlock();
                events.awaitDelete(ghost.getKey(), LONG);
            }
            late.deliverAnswer();
            FencedLock again = me.obtain(this.key);
            assertThat(again.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            again.unlock();
            assertThat(me.getStatistics().getBackendErrors()).as("store errors").isZero();
        }
        finally {
            late.deliverRequest();
            late.deliverAnswer();
        }
    }

    /**
     * A late attempt that writes the key again after it vanished under its hold (deleted by hand):
     * the hold is still its thread's until it unlocks, so no sweep takes the key; its answer shows
     * another revision than the entry's, and the key is deleted then.
     */
    @Test
    void aWriteAttemptThatWritesAVanishedEntryAgainIsDeletedOnItsAnswer() throws Exception {
        HeldGrpcCall late = holdFirstEntryWrite();
        try (Client client = clientThrough(late); EtcdLockRegistry me = registry(client, "me")) {
            FencedLock lock = me.obtain(this.key);
            lock.lock();
            late.awaitHeld(LONG);
            KeyValue written = entries().get(0);
            this.rawClient.getKVClient().delete(written.getKey()).get(LONG.toSeconds(), TimeUnit.SECONDS);
            try (EntryEvents events = EntryEvents.after(this.rawClient, root(), currentRevision())) {
                late.deliverAnswer();
                late.deliverRequest();
                KeyValue ghost = events.awaitPut(LONG);
                assertThat(ghost.getKey()).isEqualTo(written.getKey());
                assertThat(ghost.getCreateRevision()).isGreaterThan(written.getCreateRevision());

                FencedLock next = this.peer.obtain(this.key);
                // Before, the key stayed until the holder's thread unlocked (the sweep skips keys of entries in use).
                assertThat(next.tryLock(PROMPTLY.toSeconds(), TimeUnit.SECONDS)).as("acquired past the late write")
                    .isTrue();
                next.unlock();
                events.awaitDelete(ghost.getKey(), LONG);
            }
            assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::unlock);
        }
        finally {
            late.deliverRequest();
            late.deliverAnswer();
        }
    }

    /** Holds the first attempt of the next entry write of {@link #key}. */
    private HeldGrpcCall holdFirstEntryWrite() {
        ByteString root = ByteString.copyFrom(root().getBytes());
        return HeldGrpcCall.firstOf("etcdserverpb.KV/Txn", message -> message instanceof TxnRequest txn
                && txn.getSuccessList().stream()
                    .anyMatch(op -> op.hasRequestPut() && op.getRequestPut().getKey().startsWith(root)));
    }

    private static Client clientThrough(HeldGrpcCall late) {
        return Client.builder().endpoints(etcd.clientEndpoints().toArray(String[]::new)).interceptor(late).build();
    }

    /**
     * The default lease TTL, and a request timeout of 20 s (attempts of 1 s) rather than 5 s
     * (attempts of 250 ms): on a loaded machine every 250 ms attempt of the entry write that
     * follows the held one once went unanswered for the whole 5 s, and the lock call gave up.
     */
    private EtcdLockRegistry registry(Client client, String owner) {
        return EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .requestTimeout(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    private ByteSequence root() {
        return new EtcdKeyspace(this.namespace).root(this.key);
    }

    private List<KeyValue> entries() throws Exception {
        return this.rawClient.getKVClient()
            .get(root(), GetOption.builder().isPrefix(true).build())
            .get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getKvs();
    }

    private long currentRevision() throws Exception {
        return this.rawClient.getKVClient().get(root()).get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getHeader().getRevision();
    }

    /** The puts and deletes under a lock's root after a revision, as etcd's history has them. */
    private static final class EntryEvents implements AutoCloseable {

        private final Queue<WatchEvent> events = new ConcurrentLinkedQueue<>();

        private final Watch.Watcher watcher;

        private EntryEvents(Client client, ByteSequence root, long afterRevision) {
            this.watcher = client.getWatchClient()
                .watch(root, WatchOption.builder().isPrefix(true).withRevision(afterRevision + 1).build(),
                        response -> this.events.addAll(response.getEvents()));
        }

        static EntryEvents after(Client client, ByteSequence root, long afterRevision) {
            return new EntryEvents(client, root, afterRevision);
        }

        /** @return the entry as the first put after the revision wrote it */
        KeyValue awaitPut(Duration timeout) {
            return await().atMost(timeout).until(() -> this.events.stream()
                .filter(event -> event.getEventType() == WatchEvent.EventType.PUT)
                .map(WatchEvent::getKeyValue)
                .findFirst()
                .orElse(null), kv -> kv != null);
        }

        void awaitDelete(ByteSequence entryKey, Duration timeout) {
            await().atMost(timeout).until(() -> this.events.stream()
                .anyMatch(event -> event.getEventType() == WatchEvent.EventType.DELETE
                        && event.getKeyValue().getKey().equals(entryKey)));
        }

        @Override
        public void close() {
            this.watcher.close();
        }
    }
}
