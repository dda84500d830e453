package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.distlock.autoconfigure.virtualthreads.VirtualThreadApp;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.VirtualThreadJdk;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot application with {@code spring.threads.virtual.enabled=true} ({@link VirtualThreadApp},
 * on a JDK 21 or later: {@link VirtualThreadJdk}, skipped without one) calls its
 * {@code @DistributedLock} methods, fair and unfair, from hundreds of virtual threads of the task
 * executor Spring Boot configures ({@code @Async}) at once, against a real etcd: every call completes
 * and ran on a virtual thread, no two holders of a key overlap and fences increase, and no
 * {@code jdk.VirtualThreadPinned} event's stack passes through distlock's code, while a canary that
 * pins inside a locked call shows that such an event would be seen and counted.
 */
class VirtualThreadApplicationIntegrationTests {

    private static final int CALLS = 300;

    private static final int KEYS = 4;

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @TempDir
    Path directory;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void lockedMethodsCalledFromVirtualThreadsExcludeEachOtherAndNeverPinTheirCarrier()
            throws IOException, InterruptedException {
        Path jdk = VirtualThreadJdk.assumeAvailable();
        List<String> jvmArgs = new ArrayList<>(VirtualThreadJdk.pinningJvmArgs(jdk));
        // Deep enough to reach the lock's interceptor from any blocking call made under it.
        jvmArgs.add("-XX:FlightRecorderOptions=stackdepth=256");
        try (JvmProcess app = JvmProcess.builder(VirtualThreadApp.class)
            .javaHome(jdk)
            .jvmArgs(jvmArgs.toArray(String[]::new))
            .args("--spring.threads.virtual.enabled=true",
                    "--distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints()),
                    "--distributed-lock.etcd.namespace=/virtual-thread-app-" + UUID.randomUUID() + "/",
                    "--distributed-lock.wait-timeout=60s", "--spring.application.name=virtual-thread-app",
                    "--logging.level.root=WARN", "--vt.calls=" + CALLS, "--vt.keys=" + KEYS,
                    "--vt.recording=" + this.directory.resolve("pinned.jfr"))
            .start()) {
            int exitCode = app.waitFor(Duration.ofMinutes(4));
            List<String> lines = app.lines();
            assertThat(exitCode).as("exit code of %s on %s; stderr:%n%s", app, jdk, app.stderrTail()).isZero();

            Map<String, Integer> result = VirtualThreadJdk.result(lines, "calls", "completed", "acquired", "virtual",
                    "unfair", "fair", "asyncFair", "concurrent", "violations", "pinned", "canaryPinned",
                    "canaryCounted");
            assertThat(VirtualThreadJdk.linesStartingWith(lines, "ERROR ")).as("calls that failed").isEmpty();
            assertThat(result.get("completed")).as("calls that completed").isEqualTo(CALLS);
            assertThat(result.get("acquired")).as("critical sections entered").isEqualTo(CALLS);
            assertThat(result.get("virtual")).as("critical sections that ran on a virtual thread").isEqualTo(CALLS);
            assertThat(result).as("calls of each way").containsEntry("unfair", CALLS / 3)
                .containsEntry("fair", CALLS / 3)
                .containsEntry("asyncFair", CALLS / 3);
            assertThat(result.get("concurrent")).as("callers that waited for their lock all at once")
                .isEqualTo(CALLS * 2 / 3);
            assertThat(VirtualThreadJdk.linesStartingWith(lines, "VIOLATION ")).as("broken lock guarantees").isEmpty();
            assertThat(result.get("canaryCounted"))
                .as("pinned events of the canary inside a locked call that the check counts (can it fail?)")
                .isPositive();
            assertThat(result.get("pinned"))
                .as("pinned carrier threads under distlock's code; events:%n%s", VirtualThreadJdk.pinnedEvents(lines))
                .isZero();
        }
    }
}
