package io.github.distlock.etcd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.JvmProcess;
import org.junit.jupiter.api.Assumptions;
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
 * <p>The build runs its tests on Java 17, so the contention runs in a child JVM of JDK 21 or
 * later: the one {@value #JDK_HOME_VARIABLE} names, else the one running the tests if it is 21 or
 * later, else {@value #DEFAULT_JDK}. Without one the test is skipped.
 *
 * <p>Since JDK 24 (JEP 491) a virtual thread that blocks while holding a monitor releases its
 * carrier, so there a {@code synchronized} block around a wait no longer pins; it still does on JDK
 * 21 to 23, which applications run on. On JDK 24 and later the child therefore runs with legacy
 * locking ({@code -XX:LockingMode=1}, while the JDK still accepts it), which brings back that
 * pinning, so a monitor held across a store call or a wait fails this test on every JDK.
 */
class VirtualThreadPinningIntegrationTests {

    static final String JDK_HOME_VARIABLE = "DISTLOCK_JDK21_HOME";

    static final String DEFAULT_JDK = "/usr/lib/jvm/temurin-25-jdk-amd64";

    private static final int THREADS = 200;

    private static final int KEYS = 4;

    private static final int ITERATIONS = 5;

    private static final Pattern RESULT_FIELD = Pattern.compile("(\\w+)=(\\d+)");

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @TempDir
    Path directory;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void contendingVirtualThreadsNeverPinTheirCarrier() throws IOException, InterruptedException {
        Path jdk = findJdk21();
        Assumptions.assumeTrue(jdk != null, () -> "no JDK 21 or later to run virtual threads on: set "
                + JDK_HOME_VARIABLE + " to one (looked at the test JVM's own and " + DEFAULT_JDK + ")");
        List<String> jvmArgs = new ArrayList<>();
        if (featureVersion(jdk) >= 24) {
            if (acceptsLegacyLocking(jdk)) {
                jvmArgs.add("-XX:LockingMode=1");
            }
            else {
                System.out.println("JDK at " + jdk + " has no legacy locking: only pinning that remains there "
                        + "(class initializers, native frames) can be seen, not monitors held across waits");
            }
        }
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

            Map<String, Integer> result = result(lines);
            assertThat(linesStartingWith(lines, "ERROR ")).as("contenders that failed").isEmpty();
            assertThat(result.get("virtual")).as("contenders that ran on virtual threads").isEqualTo(THREADS);
            assertThat(result.get("finished")).as("virtual threads that finished their iterations").isEqualTo(THREADS);
            assertThat(linesStartingWith(lines, "VIOLATION ")).as("broken lock guarantees").isEmpty();
            assertThat(result.get("acquired")).as("critical sections entered").isPositive();
            assertThat(result.get("timedOut") + result.get("interrupted"))
                .as("waits that ended by timeout or interrupt").isPositive();
            assertThat(result.get("canaryPinned"))
                .as("pinned events of the canary that parks in a class initializer (does the recording see pinning?)")
                .isPositive();
            assertThat(result.get("pinned"))
                .as("pinned carrier threads; events:%n%s", pinnedEvents(lines))
                .isZero();
        }
    }

    /** The first JDK of feature version 21 or later among the candidates, or {@code null}. */
    private static Path findJdk21() throws IOException {
        String configured = System.getenv(JDK_HOME_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            Path home = Path.of(configured);
            // Named on purpose: a wrong one is an error, not a reason to skip.
            assertThat(featureVersion(home)).as("feature version of the JDK at %s=%s", JDK_HOME_VARIABLE, home)
                .isGreaterThanOrEqualTo(21);
            return home;
        }
        Path own = Path.of(System.getProperty("java.home"));
        if (Files.isRegularFile(own.resolve("release")) && featureVersion(own) >= 21) {
            return own;
        }
        Path installed = Path.of(DEFAULT_JDK);
        if (Files.isRegularFile(installed.resolve("release")) && featureVersion(installed) >= 21) {
            return installed;
        }
        return null;
    }

    /** The feature version in the JDK's {@code release} file ({@code JAVA_VERSION="25.0.3"} is 25). */
    private static int featureVersion(Path jdk) throws IOException {
        Path release = jdk.resolve("release");
        assertThat(release).as("release file of the JDK at %s", jdk).isRegularFile();
        Matcher version = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)")
            .matcher(Files.readString(release, StandardCharsets.UTF_8));
        return version.find() ? Integer.parseInt(version.group(1)) : 0;
    }

    /** Whether the JDK still runs with {@code -XX:LockingMode=1} rather than ignoring or refusing it. */
    private static boolean acceptsLegacyLocking(Path jdk) throws IOException, InterruptedException {
        Process probe = new ProcessBuilder(jdk.resolve("bin").resolve("java").toString(), "-XX:LockingMode=1",
                "-version")
            .redirectErrorStream(true)
            .start();
        String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!probe.waitFor(30, TimeUnit.SECONDS)) {
            probe.destroyForcibly();
            return false;
        }
        return probe.exitValue() == 0 && !output.contains("Ignoring option") && !output.contains("obsolete");
    }

    private static Map<String, Integer> result(List<String> lines) {
        List<String> results = linesStartingWith(lines, "RESULT ");
        assertThat(results).as("the child's RESULT line; its output:%n%s", String.join("\n", lines)).hasSize(1);
        Map<String, Integer> fields = new HashMap<>();
        Matcher field = RESULT_FIELD.matcher(results.get(0));
        while (field.find()) {
            fields.put(field.group(1), Integer.parseInt(field.group(2)));
        }
        assertThat(fields).as("fields of %s", results.get(0))
            .containsKeys("virtual", "finished", "acquired", "timedOut", "interrupted", "pinned", "canaryPinned");
        return fields;
    }

    private static List<String> linesStartingWith(List<String> lines, String prefix) {
        return lines.stream().filter(line -> line.startsWith(prefix)).collect(Collectors.toList());
    }

    /** Every PINNED line with the stack frames printed under it. */
    private static String pinnedEvents(List<String> lines) {
        List<String> shown = new ArrayList<>();
        boolean inPinned = false;
        for (String line : lines) {
            if (!line.startsWith("    at ")) {
                inPinned = line.startsWith("PINNED ");
            }
            if (inPinned) {
                shown.add(line);
            }
        }
        return String.join("\n", shown);
    }
}
