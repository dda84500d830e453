package io.github.distlock.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Small process and file helpers shared by {@link EtcdCluster}, {@link RedisServer}, {@link DatabaseServer} and
 * {@link JvmProcess}.
 */
public final class ProcessSupport {

    /** Poll interval of bounded waits: short enough to add no noticeable latency. */
    private static final long POLL_MILLIS = 20;

    private ProcessSupport() {
    }

    /**
     * Sends a signal the JDK cannot send (it only knows SIGTERM and SIGKILL) through {@code kill}.
     * @param signal the signal name without the {@code SIG} prefix, e.g. {@code STOP}
     */
    static void signal(long pid, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + output.strip());
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not run kill -" + signal + " " + pid, ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while sending SIG" + signal + " to " + pid, ex);
        }
    }

    /**
     * Waits until the process is or is no longer stopped by SIGSTOP, so that a test that pauses a
     * process can rely on it being frozen when {@code pause()} returns. Without Linux's /proc this
     * returns at once: the signal was sent, only the confirmation is missing.
     */
    static void awaitStopped(long pid, boolean stopped, Duration timeout) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (!Files.isReadable(stat)) {
            return;
        }
        boolean reached = poll(timeout, () -> isStopped(stat) == stopped);
        if (!reached) {
            throw new IllegalStateException("Process " + pid + (stopped ? " did not stop" : " did not continue")
                    + " within " + timeout);
        }
    }

    private static boolean isStopped(Path stat) {
        try {
            // Format: "pid (comm) state ...", comm may itself contain spaces and parentheses.
            String content = Files.readString(stat, StandardCharsets.ISO_8859_1);
            char state = content.substring(content.lastIndexOf(')') + 2).charAt(0);
            return state == 'T' || state == 't';
        }
        catch (NoSuchFileException ex) {
            return false;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Waits for the process to exit and fails if it does not do so in time. */
    static void awaitExit(Process process, Duration timeout, String description) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException(description + " did not exit within " + timeout);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for " + description + " to exit", ex);
        }
    }

    /**
     * Evaluates the condition until it holds or the timeout passes.
     * @return whether the condition held in time
     */
    static boolean poll(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while waiting", ex);
            }
        }
    }

    /** The last lines of a log file, for failure messages; never throws. */
    static String tail(Path file, int maxLines) {
        try {
            String content = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            List<String> lines = Arrays.asList(content.split("\\R"));
            List<String> last = lines.subList(Math.max(0, lines.size() - maxLines), lines.size());
            return String.join(System.lineSeparator(), last);
        }
        catch (IOException | RuntimeException ex) {
            return "(could not read " + file + ": " + ex + ")";
        }
    }

    /**
     * Finds a server binary: {@code $<variable>} if set (which must then be executable), else
     * {@code /usr/bin/<name>}, else {@code <name>} in one of {@code moreDirectories}, else on the
     * {@code PATH}.
     * @param variable the environment variable that overrides the search, e.g. {@code ETCD_BIN}
     * @param name the binary's file name, e.g. {@code etcd}
     * @param debianPackage the Debian package that installs it, for the error message
     * @param moreDirectories where else the package puts it, e.g. {@code /usr/sbin}
     * @return the binary
     * @throws IllegalStateException naming what was looked at and how to install it
     */
    public static Path locateBinary(String variable, String name, String debianPackage, Path... moreDirectories) {
        String configured = System.getenv(variable);
        if (configured != null && !configured.isBlank()) {
            Path path = Path.of(configured);
            if (!Files.isExecutable(path)) {
                throw new IllegalStateException(variable + "=" + configured + " is not an executable file. Point it to "
                        + "a " + name + " binary, or unset it after 'apt-get install -y " + debianPackage + "'.");
            }
            return path;
        }
        List<Path> candidates = new ArrayList<>();
        candidates.add(Path.of("/usr/bin", name));
        for (Path directory : moreDirectories) {
            candidates.add(directory.resolve(name));
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isBlank()) {
                candidates.add(Path.of(dir, name));
            }
        }
        return candidates.stream()
            .filter(Files::isExecutable)
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("No " + name + " binary found (looked at $" + variable
                    + ", /usr/bin/" + name + Arrays.stream(moreDirectories).map(d -> ", " + d.resolve(name)).collect(Collectors.joining())
                    + " and the PATH). Install it with 'apt-get install -y " + debianPackage
                    + "' (Debian/Ubuntu; scripts/test.sh does), or set " + variable + " to the path of a " + name
                    + " binary."));
    }

    /** Starts a server on a given port; throws {@link IllegalStateException} if it did not come up. */
    @FunctionalInterface
    interface PortLaunch {

        void launch(int port);
    }

    /**
     * Starts a server on a free loopback port, taking another port when the chosen one was taken
     * between the check and the bind (its log then says "Address already in use").
     * @param attempts how many ports to try
     * @param launch starts the server on a port
     * @param kill stops what a failed launch left running
     * @param log the server's log, read after a failed launch
     * @return the port the server listens on
     */
    static int startOnFreePort(int attempts, PortLaunch launch, Runnable kill, Supplier<Path> log) {
        IllegalStateException lastFailure = new IllegalStateException("No attempt to start the server was made");
        for (int attempt = 1; attempt <= attempts; attempt++) {
            int port = freeLoopbackPort();
            try {
                launch.launch(port);
                return port;
            }
            catch (IllegalStateException ex) {
                lastFailure = ex;
                kill.run();
                if (!tail(log.get(), 40).contains("Address already in use")) {
                    throw ex;
                }
            }
        }
        throw lastFailure;
    }

    /**
     * @param count how many
     * @return that many distinct free loopback ports: each is held until all are chosen, so the
     * system cannot hand out one twice (one server's ports must differ, or it refuses its configuration)
     */
    public static int[] freeLoopbackPorts(int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not find " + count + " free loopback ports", ex);
        }
        finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                }
                catch (IOException ex) {
                    // Closing a listening socket that accepted nothing: nothing to do.
                }
            }
        }
    }

    /** A loopback port that was free a moment ago; callers retry if it is taken before they bind it. */
    static int freeLoopbackPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not find a free loopback port", ex);
        }
    }

    static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not delete " + root, ex);
        }
    }

    /**
     * Registers a cleanup to run if the JVM exits before the owner is closed.
     * @return the hook, to pass to {@link #removeShutdownHook(Thread)} on close
     */
    static Thread addShutdownHook(String name, Runnable cleanup) {
        Thread hook = new Thread(cleanup, name);
        Runtime.getRuntime().addShutdownHook(hook);
        return hook;
    }

    static void removeShutdownHook(Thread hook) {
        if (hook == Thread.currentThread()) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (IllegalStateException ex) {
            // The JVM is already shutting down: the hook runs (or ran) anyway.
        }
    }

}
