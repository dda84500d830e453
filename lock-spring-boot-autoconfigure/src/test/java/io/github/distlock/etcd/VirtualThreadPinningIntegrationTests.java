package io.github.distlock.etcd;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.VirtualThreadJdk;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Virtual threads contending for etcd locks never pin their carrier thread: no
 * {@code jdk.VirtualThreadPinned} event while 200 virtual threads wait for, time out on, are
 * interrupted in and hand over fair and unfair locks (see {@link VirtualThreadContentionMain}),
 * and mutual exclusion and fencing hold on every key.
 *
 * <p>The build runs its tests on Java 17, so the contention runs in a child JVM of JDK 21 or later
 * ({@link VirtualThreadJdk}: skipped without one), with the monitor pinning of JDK 21 to 23
 * brought back on JDK 24 and later.
 */
class VirtualThreadPinningIntegrationTests {

    private static final int THREADS = 200;

    private static final int KEYS = 4;

    private static final int ITERATIONS = 5;

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @TempDir
    Path directory;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void contendingVirtualThreadsNeverPinTheirCarrier() throws IOException, InterruptedException {
        Path jdk = VirtualThreadJdk.assumeAvailable();
        List<String> jvmArgs = VirtualThreadJdk.pinningJvmArgs(jdk);
        String namespace = "/virtual-threads-" + UUID.randomUUID() + "/";
        try (JvmProcess child = JvmProcess.builder(VirtualThreadContentionMain.class)
            .javaHome(jdk)
            .jvmArgs(jvmArgs.toArray(String[]::new))
            .args(String.join(",", etcd.clientEndpoints()), namespace, Integer.toString(THREADS),
                    Integer.toString(KEYS), Integer.toString(ITERATIONS),
                    this.directory.resolve("pinned.jfr").toString())
            .start()) {
            int exitCode = child.waitFor(Duration.ofMinutes(3));
            List<String> lines = child.lines();
            assertThat(exitCode).as("exit code of %s on %s; stderr:%n%s", child, jdk, child.stderrTail()).isZero();

            Map<String, Integer> result = VirtualThreadJdk.result(lines, "virtual", "finished", "acquired", "timedOut",
                    "interrupted", "pinned", "canaryPinned");
            assertThat(VirtualThreadJdk.linesStartingWith(lines, "ERROR ")).as("contenders that failed").isEmpty();
            assertThat(result.get("virtual")).as("contenders that ran on virtual threads").isEqualTo(THREADS);
            assertThat(result.get("finished")).as("virtual threads that finished their iterations").isEqualTo(THREADS);
            assertThat(VirtualThreadJdk.linesStartingWith(lines, "VIOLATION ")).as("broken lock guarantees").isEmpty();
            assertThat(result.get("acquired")).as("critical sections entered").isPositive();
            assertThat(result.get("timedOut") + result.get("interrupted"))
                .as("waits that ended by timeout or interrupt").isPositive();
            assertThat(result.get("canaryPinned"))
                .as("pinned events of the canary that parks in a class initializer (does the recording see pinning?)")
                .isPositive();
            assertThat(result.get("pinned"))
                .as("pinned carrier threads; events:%n%s", VirtualThreadJdk.pinnedEvents(lines))
                .isZero();
        }
    }
}
