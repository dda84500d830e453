package io.github.distlock.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.HeldWatchResponses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A waiter whose watch stream lags behind etcd, against a real single-member etcd: the stream's
 * answers are held and passed on one at a time, as a stream on a member catching up after a
 * freeze passes on revisions the cluster has long moved past.
 */
class LaggingWatchIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    private final HeldWatchResponses watch = new HeldWatchResponses();

    private Client holderClient;

    private Client waiterClient;

    private Client rawClient;

    private EtcdLockRegistry holders;

    private EtcdLockRegistry waiters;

    private String namespace;

    private String key;

    @BeforeEach
    void setUp(TestInfo test) {
        this.namespace = "/it-" + UUID.randomUUID() + "/";
        this.key = test.getTestMethod().orElseThrow().getName();
        this.holderClient = etcd.newClient();
        this.waiterClient = Client.builder()
            .endpoints(etcd.clientEndpoints().toArray(String[]::new))
            .interceptor(this.watch)
            .build();
        this.rawClient = etcd.newClient();
        this.holders = newRegistry(this.holderClient, "holder");
        this.waiters = newRegistry(this.waiterClient, "waiter");
    }

    @AfterEach
    void tearDown() {
        this.watch.deliverAll();
        this.waiters.close();
        this.holders.close();
        this.waiterClient.close();
        this.holderClient.close();
        this.rawClient.close();
    }

    /**
     * Long enough that neither the waiter's safety re-read (one TTL) nor the watch probe (a fifth
     * of the request timeout) reads the queue while the watch is held: only the handoff's event does.
     */
    private EtcdLockRegistry newRegistry(Client client, String owner) {
        return EtcdLockRegistry.builder(client)
            .namespace(this.namespace)
            .leaseTtl(LONG)
            .ownerIdentity(owner)
            .requestTimeout(LONG)
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    /**
     * The nemesis case: etcd deleted the waiter's entry (a resumed deposed leader revoked its lease,
     * or a delete by hand) right after the holder's release, while the waiter's session is alive
     * and its watch still delivers the release. The release alone must not make the waiter the
     * holder of an entry that is gone: another process may be granted the key as the next in line.
     */
    @Test
    void aWaiterIsNotGrantedAnEntryDeletedBeforeItsWatchDeliveredTheHandoff() throws Exception {
        FencedLock holder = this.holders.obtain(this.key, true);
        holder.lock();
        CompletableFuture<Long> grantedFence = new CompletableFuture<>();
        CountDownLatch mayUnlock = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            FencedLock lock = this.waiters.obtain(this.key, true);
            try {
                if (!lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    grantedFence.completeExceptionally(new IllegalStateException("not granted"));
                    return;
                }
                grantedFence.complete(lock.getFence());
                mayUnlock.await(LONG.toSeconds(), TimeUnit.SECONDS);
                lock.unlock();
            }
            catch (InterruptedException | RuntimeException ex) {
                grantedFence.completeExceptionally(ex);
            }
        }, "waiter");
        waiter.start();
        await().atMost(LONG).until(() -> entries().size() == 2);
        ByteSequence holderEntry = entries().get(0).getKey();
        ByteSequence waiterEntry = entries().get(1).getKey();

        this.watch.hold();
        holder.unlock();
        assertThat(this.rawClient.getKVClient().delete(waiterEntry).get(LONG.toSeconds(), TimeUnit.SECONDS).getDeleted())
            .as("the waiter's entry deleted behind its back").isEqualTo(1);
        // Both deletions reached the waiter's client, the release's first, each in its own answer, and wait there.
        await().atMost(LONG).until(() -> indexOfDeletion(this.watch.heldResponses(), waiterEntry) >= 0);
        List<WatchResponse> held = this.watch.heldResponses();
        int release = indexOfDeletion(held, holderEntry);
        assertThat(release).as("the held answer with the release, in %s", held)
            .isNotNegative()
            .isLessThan(indexOfDeletion(held, waiterEntry));
        assertThat(deletedKeys(held.get(release))).as("the held answer with the release").doesNotContain(waiterEntry);
        assertThat(grantedFence).as("granted before the watch told of the release").isNotDone();

        // The watch now delivers the release, and not yet the deletion that followed it.
        for (int i = 0; i <= release; i++) {
            this.watch.deliverOne();
        }
        long fence = grantedFence.get(LONG.toSeconds(), TimeUnit.SECONDS);
        long revision = Fences.storeFence(fence);
        assertThat(entries()).as("etcd's entries of the lock when the waiter was granted it with fence %d "
                + "(entry written at revision %d)", fence, revision)
            .anyMatch((kv) -> kv.getCreateRevision() == revision);
        mayUnlock.countDown();
        this.watch.deliverAll();
        waiter.join(LONG.toMillis());
    }

    private List<KeyValue> entries() throws Exception {
        ByteSequence root = ByteSequence.from(this.namespace, StandardCharsets.UTF_8);
        return this.rawClient.getKVClient()
            .get(root, GetOption.builder()
                .isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND)
                .build())
            .get(LONG.toSeconds(), TimeUnit.SECONDS)
            .getKvs();
    }

    private static int indexOfDeletion(List<WatchResponse> responses, ByteSequence key) {
        for (int i = 0; i < responses.size(); i++) {
            if (deletedKeys(responses.get(i)).contains(key)) {
                return i;
            }
        }
        return -1;
    }

    private static List<ByteSequence> deletedKeys(WatchResponse response) {
        return response.getEventsList().stream()
            .filter((event) -> event.getType() == Event.EventType.DELETE)
            .map((event) -> ByteSequence.from(event.getKv().getKey()))
            .toList();
    }
}
