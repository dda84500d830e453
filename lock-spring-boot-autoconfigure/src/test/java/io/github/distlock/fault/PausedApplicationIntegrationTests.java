package io.github.distlock.fault;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
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
 * G5 at the application level: a Spring Boot application frozen (SIGSTOP) inside a
 * {@code @DistributedLock} method for three lease TTLs loses the lock to another process, and when
 * it runs again the call ends with {@code LockLostException} and a {@code LockLostEvent} is
 * published, instead of the method's result being passed off as done under the lock.
 */
@FaultInjectionTest
class PausedApplicationIntegrationTests {

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
        this.application = JvmProcess.start(ContendingApp.class,
                "--distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints()),
                "--distributed-lock.etcd.namespace=" + this.namespace,
                "--distributed-lock.etcd.lease-ttl=" + TTL_SECONDS + "s", "--logging.level.root=WARN",
                "--contend.id=A", "--contend.dir=" + this.directory);
        this.application.awaitLine("READY"::equals, LONG);
        this.application.sendLine("hold");
        long staleFence = Long.parseLong(this.application.awaitLine(line -> line.startsWith("HOLDING "), LONG)
            .substring("HOLDING ".length()));

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
}
