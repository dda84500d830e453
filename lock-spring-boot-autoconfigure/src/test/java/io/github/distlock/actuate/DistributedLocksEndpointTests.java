package io.github.distlock.actuate;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.actuate.DistributedLocksEndpoint.EntryDescriptor;
import io.github.distlock.actuate.DistributedLocksEndpoint.LockDescriptor;
import io.github.distlock.actuate.DistributedLocksEndpoint.LockStoreUnavailableException;
import io.github.distlock.actuate.DistributedLocksEndpoint.LocksDescriptor;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.Delegation;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link DistributedLocksEndpoint} against a real etcd: what its operations answer (the JSON over
 * HTTP is covered by the sample application's tests).
 */
class DistributedLocksEndpointTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private Client client;

    private EtcdLockRegistry registry;

    private DistributedLocksEndpoint endpoint;

    @BeforeEach
    void setUp() {
        this.client = etcd.newClient();
        this.registry = EtcdLockRegistry.builder(this.client)
            .namespace("/endpoint-" + UUID.randomUUID() + "/")
            .leaseTtl(Duration.ofSeconds(10))
            .ownerIdentity("orders@host-1:7")
            .endpoints(etcd.clientEndpoints())
            .build();
        this.endpoint = new DistributedLocksEndpoint(this.registry);
    }

    @AfterEach
    void tearDown() {
        this.registry.close();
        this.client.close();
    }

    @Test
    void showsAKeyWithSlashesFromItsPathSegmentsAndTheWholeNamespace() {
        FencedLock lock = this.registry.obtain("orders/42");
        lock.lock();
        try {
            LockDescriptor one = this.endpoint.lock(new String[] { "orders", "42" });
            assertThat(one.key()).isEqualTo("orders/42");
            EntryDescriptor holder = one.holder();
            assertThat(holder).isNotNull();
            assertThat(holder.owner()).isEqualTo("orders@host-1:7");
            assertThat(holder.thread()).isEqualTo(Thread.currentThread().getName());
            assertThat(holder.fence()).isEqualTo(lock.getFence());
            assertThat(Instant.parse(holder.queuedAt())).isBefore(Instant.now().plusSeconds(1));
            assertThat(holder.leaseTimeToLiveSeconds()).isBetween(0L, 10L);
            assertThat(one.waiters()).isEmpty();

            LocksDescriptor all = this.endpoint.locks();
            assertThat(all.namespace()).isEqualTo(this.registry.getNamespace());
            assertThat(all.truncated()).isFalse();
            assertThat(all.locks()).containsExactly(one);
        }
        finally {
            lock.unlock();
        }
        LockDescriptor free = this.endpoint.lock(new String[] { "orders", "42" });
        assertThat(free.holder()).isNull();
        assertThat(free.waiters()).isEmpty();
        assertThat(this.endpoint.locks().locks()).isEmpty();
    }

    /**
     * Requests for one lock that arrive while its read is in flight wait for that read rather than
     * sending their own (a read that etcd leaves hanging is not multiplied by retrying clients).
     */
    @Test
    void requestsForALockWhoseReadIsInFlightShareThatRead() throws Exception {
        FencedLock lock = this.registry.obtain("orders/42");
        lock.lock();
        AtomicInteger reads = new AtomicInteger();
        CountDownLatch readMayFinish = new CountDownLatch(1);
        InspectableLockRegistry counting = (InspectableLockRegistry) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { InspectableLockRegistry.class }, (proxy, method, args) -> {
                    if (method.getName().equals("describeLock")) {
                        reads.incrementAndGet();
                        assertThat(readMayFinish.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
                    }
                    return Delegation.invoke(this.registry, method, args);
                });
        DistributedLocksEndpoint endpoint = new DistributedLocksEndpoint(counting, LONG);
        ExecutorService requests = Executors.newFixedThreadPool(2);
        try {
            Future<LockDescriptor> first = requests.submit(() -> endpoint.lock(new String[] { "orders", "42" }));
            await().atMost(LONG).until(() -> reads.get() == 1);
            AtomicReference<Thread> secondThread = new AtomicReference<>();
            Future<LockDescriptor> second = requests.submit(() -> {
                secondThread.set(Thread.currentThread());
                return endpoint.lock(new String[] { "orders", "42" });
            });
            // Waiting for an answer: it joined the read in flight, or sent its own (then blocked in it).
            await().atMost(LONG).until(() -> secondThread.get() != null
                    && secondThread.get().getState() == Thread.State.TIMED_WAITING);
            readMayFinish.countDown();
            LockDescriptor answer = first.get(LONG.toSeconds(), TimeUnit.SECONDS);
            assertThat(answer.holder()).isNotNull();
            assertThat(second.get(LONG.toSeconds(), TimeUnit.SECONDS)).isEqualTo(answer);
            assertThat(reads).hasValue(1);
        }
        finally {
            readMayFinish.countDown();
            requests.shutdownNow();
            lock.unlock();
        }
    }

    @Test
    void unavailableWithinTheBoundWhileEtcdCannotBeConnectedTo() {
        try (Client unreachable = Client.builder().endpoints("http://127.0.0.1:1").build();
                EtcdLockRegistry registry = EtcdLockRegistry.builder(unreachable)
                    .requestTimeout(Duration.ofMillis(500))
                    .build()) {
            DistributedLocksEndpoint endpoint = new DistributedLocksEndpoint(registry, Duration.ofMillis(300));
            // The first request waits for the connect attempt it starts, at most the bound.
            assertUnavailableWithin(endpoint, Duration.ofSeconds(2));
            // Once an attempt failed, requests answer from that without waiting.
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(unavailable(endpoint).getReason())
                .startsWith("could not connect to the lock store: ")
                .doesNotContain("127.0.0.1"));
            assertUnavailableWithin(endpoint, Duration.ofMillis(200));
        }
    }

    private static void assertUnavailableWithin(DistributedLocksEndpoint endpoint, Duration bound) {
        long start = System.nanoTime();
        unavailable(endpoint);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
    }

    private static LockStoreUnavailableException unavailable(DistributedLocksEndpoint endpoint) {
        LockStoreUnavailableException ex = catchThrowableOfType(LockStoreUnavailableException.class,
                () -> endpoint.lock(new String[] { "orders", "42" }));
        assertThat(ex).isNotNull();
        assertThat(ex.getMessage()).isEqualTo("lock store unavailable: " + ex.getReason());
        return ex;
    }
}
