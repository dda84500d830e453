package io.github.distlock.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test's side of running virtual threads in a child JVM ({@link JvmProcess.Builder#javaHome})
 * while the build runs its tests on Java 17: the JDK 21 or later to run it on, the JVM options that
 * make pinning visible, and the child's output as {@link PinnedThreadRecording} and the child print it.
 *
 * <p>The JDK is the one {@value #HOME_VARIABLE} names, else the one running the tests if it is 21
 * or later, else {@value #DEFAULT_HOME}; without one the test is skipped.
 *
 * <p>Since JDK 24 (JEP 491) a virtual thread that blocks while holding a monitor releases its
 * carrier, so there a {@code synchronized} block around a wait no longer pins; it still does on JDK
 * 21 to 23, which applications run on. On JDK 24 and later the child therefore runs with legacy
 * locking ({@code -XX:LockingMode=1}, while the JDK still accepts it), which brings back that
 * pinning, so a monitor held across a store call or a wait is seen on every JDK.
 */
public final class VirtualThreadJdk {

    /** The environment variable that names the JDK to run virtual threads on. */
    public static final String HOME_VARIABLE = "DISTLOCK_JDK21_HOME";

    /** Where the development machines have a JDK 21+ (Temurin 25). */
    public static final String DEFAULT_HOME = "/usr/lib/jvm/temurin-25-jdk-amd64";

    private static final Pattern RESULT_FIELD = Pattern.compile("(\\w+)=(\\d+)");

    private VirtualThreadJdk() {
    }

    /**
     * The JDK to run virtual threads on; skips the test (a failed assumption) if there is none.
     * @return its home directory
     */
    public static Path assumeAvailable() throws IOException {
        Path jdk = find();
        Assumptions.assumeTrue(jdk != null, () -> "no JDK 21 or later to run virtual threads on: set "
                + HOME_VARIABLE + " to one (looked at the test JVM's own and " + DEFAULT_HOME + ")");
        return jdk;
    }

    /** The first JDK of feature version 21 or later among the candidates, or {@code null}. */
    private static @Nullable Path find() throws IOException {
        String configured = System.getenv(HOME_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            Path home = Path.of(configured);
            // Named on purpose: a wrong one is an error, not a reason to skip.
            assertThat(featureVersion(home)).as("feature version of the JDK at %s=%s", HOME_VARIABLE, home)
                .isGreaterThanOrEqualTo(21);
            return home;
        }
        Path own = Path.of(System.getProperty("java.home"));
        if (Files.isRegularFile(own.resolve("release")) && featureVersion(own) >= 21) {
            return own;
        }
        Path installed = Path.of(DEFAULT_HOME);
        if (Files.isRegularFile(installed.resolve("release")) && featureVersion(installed) >= 21) {
            return installed;
        }
        return null;
    }

    /**
     * The JVM options that make a monitor held across a wait pin on {@code jdk}: legacy locking on
     * JDK 24 and later, nothing before (where it always pins).
     * @param jdk a JDK of version 21 or later
     * @return the options, maybe empty
     */
    public static List<String> pinningJvmArgs(Path jdk) throws IOException, InterruptedException {
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
        return jvmArgs;
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

    /**
     * The fields of the child's one {@code RESULT name=<n> ...} line.
     * @param lines the child's output
     * @param expected the fields it must have
     * @return the fields by name
     */
    public static Map<String, Integer> result(List<String> lines, String... expected) {
        List<String> results = linesStartingWith(lines, "RESULT ");
        assertThat(results).as("the child's RESULT line; its output:%n%s", String.join("\n", lines)).hasSize(1);
        Map<String, Integer> fields = new HashMap<>();
        Matcher field = RESULT_FIELD.matcher(results.get(0));
        while (field.find()) {
            fields.put(field.group(1), Integer.parseInt(field.group(2)));
        }
        assertThat(fields).as("fields of %s", results.get(0)).containsKeys(expected);
        return fields;
    }

    /** @return the lines that start with {@code prefix} */
    public static List<String> linesStartingWith(List<String> lines, String prefix) {
        return lines.stream().filter((line) -> line.startsWith(prefix)).toList();
    }

    /** @return every {@code PINNED} line with the stack frames printed under it */
    public static String pinnedEvents(List<String> lines) {
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
