package io.github.distlock.fault;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.autoconfigure.contending.ContendingApp;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.JvmProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Spring Boot application in a JVM of its own, holding a lock in a {@code @DistributedLock}
 * method, meets a fault. Frozen (SIGSTOP) for three lease TTLs, it loses the lock to another
 * process, and when it runs again the call ends with {@code LockLostException} and a
 * {@code LockLostEvent} is published, instead of the method's result being passed off as done
 * under the lock (G5). Shut down (SIGTERM), it closes its context, which revokes its lease: the
 * next waiter enters at once, not after the TTL (G4).
 */
@FaultInjectionTest
class ApplicationFaultIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final long TTL_SECONDS = 2;

    private static final Duration LONG = Duration.ofSeconds(90);

    @TempDir
    Path directory;

    private final String namespace = "/fault-paused-app-" + UUID.randomUUID() + "/";

    private Client client;

    private EtcdLockRegistry registry;

    private JvmProcess application;

    @BeforeEach
    void setUp() {
        this.client = etcd.newClient();
        this.registry = EtcdLockRegistry.builder(this.client)
            .namespace(this.namespace)
            .leaseTtl(Duration.ofSeconds(TTL_SECONDS))
            .ownerIdentity("test")
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @AfterEach
    void tearDown() {
        if (this.application != null) {
            this.application.close();
        }
        this.registry.close();
        this.client.close();
    }

    @Test
    void frozenApplicationIsToldByTheAspectAndAnEventThatItLostTheLock() throws Exception {
        long staleFence = startApplicationHolding(TTL_SECONDS);

        this.application.pause();
        long pausedAt = System.nanoTime();
        FencedLock lock = this.registry.obtain("contended", true);
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        try {
            assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isLessThan(Duration.ofSeconds(3 * TTL_SECONDS));
            assertThat(lock.getFence()).isGreaterThan(staleFence);
            long resumeAt = pausedAt + Duration.ofSeconds(3 * TTL_SECONDS).toNanos();
            await().atMost(LONG).pollInterval(Duration.ofMillis(50)).until(() -> System.nanoTime() - resumeAt >= 0);
            this.application.resume();

            // The method returns normally; the aspect finds the hold gone and fails the call.
            this.application.sendLine("release");
            String event = this.application.awaitLine(line -> line.startsWith("LOCK_LOST_EVENT "), LONG);
            assertThat(event).isEqualTo("LOCK_LOST_EVENT contended " + staleFence);
            String outcome = this.application.awaitLine(line -> line.startsWith("FAILED hold ")
                    || line.equals("DONE hold"), LONG);
            assertThat(outcome).startsWith("FAILED hold io.github.distlock.LockLostException").contains("contended");
            // The frozen application did not take the lock back or delete this holder's entry.
            assertThat(lock.isLockedByCurrentThread()).isTrue();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void terminatedApplicationReleasesItsLockAtOnce() throws Exception {
        long ttlSeconds = 30;
        long heldFence = startApplicationHolding(ttlSeconds);
        FencedLock lock = this.registry.obtain("contended", true);
        CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
            try {
                assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
                long at = System.nanoTime();
                assertThat(lock.getFence()).isGreaterThan(heldFence);
                lock.unlock();
                return at;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        await().atMost(LONG).until(() -> this.registry.describeLock("contended", 10).waiters().size() == 1);
        long terminatedAt = System.nanoTime();
        this.application.terminate();
        Duration handoff = Duration.ofNanos(acquiredAt.get(LONG.toSeconds(), TimeUnit.SECONDS) - terminatedAt);
        System.out.printf("[application shutdown] next waiter entered %d ms after SIGTERM (TTL %d s)%n",
                handoff.toMillis(), ttlSeconds);
        // Far below the 30 s TTL: closing the context revoked the lease.
        assertThat(handoff).isLessThan(Duration.ofSeconds(5));
    }

    /** Starts the application and has it hold the lock; returns the fence. */
    private long startApplicationHolding(long ttlSeconds) {
        this.application = JvmProcess.start(ContendingApp.class,
                "--distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints()),
                "--distributed-lock.etcd.namespace=" + this.namespace,
                "--distributed-lock.etcd.lease-ttl=" + ttlSeconds + "s", "--logging.level.root=WARN",
                "--contend.id=A", "--contend.dir=" + this.directory);
        this.application.awaitLine("READY"::equals, LONG);
        this.application.sendLine("hold");
        return Long.parseLong(this.application.awaitLine(line -> line.startsWith("HOLDING "), LONG)
            .substring("HOLDING ".length()));
    }
}
