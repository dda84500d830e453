package io.github.distlock.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A child JVM running a main class on the test class path, for tests that need a second process
 * (a lock holder that crashes, pauses or exits).
 * <p>
 * The child uses the same {@code java} binary (unless {@link Builder#javaHome another JDK} is named)
 * and class path as the tests, with small-heap,
 * serial-GC, C1-only flags by default so that several of them fit on a small machine. Its stdout
 * is collected line by line (see {@link #awaitLine}) and echoed to this JVM's stdout with a
 * prefix; its stderr goes to a temporary file whose tail appears in failure messages. Its stdin is
 * a pipe this object holds ({@link #sendLine}), so a child that reads stdin sees end-of-file when
 * the test JVM dies. {@link #close()} kills the child and deletes the log; a shutdown hook does the
 * same if a test never gets to close it.
 */
public final class JvmProcess implements AutoCloseable {

    /* No perf data: a killed child would otherwise leave its hsperfdata file in the temp directory. */
    private static final List<String> DEFAULT_JVM_ARGS = List.of("-Xmx256m", "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData");

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(15);

    private static final int TAIL_LINES = 40;

    private final String name;

    private final Process process;

    private final Path tempDir;

    private final Path stderrLog;

    private final Writer stdin;

    /** Guards itself and {@link #stdoutClosed}; waiters in {@link #awaitLine} are notified on every line. */
    private final List<String> lines = new ArrayList<>();

    private boolean stdoutClosed;

    private final Thread stdoutReader;

    private final Thread shutdownHook;

    private boolean paused;

    private boolean closed;

    private JvmProcess(Builder builder) {
        List<String> command = new ArrayList<>();
        Path javaHome = (builder.javaHome != null) ? builder.javaHome : Path.of(System.getProperty("java.home"));
        command.add(javaHome.resolve("bin").resolve("java").toString());
        command.addAll(DEFAULT_JVM_ARGS);
        command.addAll(builder.jvmArgs);
        command.add("-cp");
        command.add(testClassPath());
        command.add(builder.mainClass.getName());
        command.addAll(builder.args);
        try {
            this.tempDir = Files.createTempDirectory("distlock-jvm-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create a temporary directory for a child JVM", ex);
        }
        this.stderrLog = this.tempDir.resolve("stderr.log");
        try {
            this.process = new ProcessBuilder(command)
                    .redirectError(this.stderrLog.toFile())
                    .start();
        }
        catch (IOException ex) {
            ProcessSupport.deleteRecursively(this.tempDir);
            throw new UncheckedIOException("Could not start a JVM for " + builder.mainClass.getName(), ex);
        }
        this.name = builder.mainClass.getSimpleName() + "[" + this.process.pid() + "]";
        this.shutdownHook = ProcessSupport.addShutdownHook(this.name + "-cleanup", this::close);
        this.stdin = new OutputStreamWriter(this.process.getOutputStream(), StandardCharsets.UTF_8);
        this.stdoutReader = new Thread(this::collectStdout, this.name + "-stdout");
        this.stdoutReader.setDaemon(true);
        this.stdoutReader.start();
    }

    /** Starts {@code mainClass} with the given program arguments and the default JVM flags. */
    public static JvmProcess start(Class<?> mainClass, String... args) {
        return builder(mainClass).args(args).start();
    }

    /** A builder for a child JVM running {@code mainClass}, which needs a {@code public static void main}. */
    public static Builder builder(Class<?> mainClass) {
        return new Builder(mainClass);
    }

    /** Surefire's class path of the tests (it is also {@code java.class.path} when no manifest-only jar is used). */
    private static String testClassPath() {
        String surefireClassPath = System.getProperty("surefire.test.class.path");
        return (surefireClassPath != null && !surefireClassPath.isBlank()) ? surefireClassPath
                : System.getProperty("java.class.path");
    }

    private void collectStdout() {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                System.out.println("[" + this.name + "] " + line);
                synchronized (this.lines) {
                    this.lines.add(line);
                    this.lines.notifyAll();
                }
            }
        }
        catch (IOException ex) {
            // The stream breaks when the child is killed; its end is reported like end-of-file.
        }
        finally {
            synchronized (this.lines) {
                this.stdoutClosed = true;
                this.lines.notifyAll();
            }
        }
    }

    /** The child's process id. */
    public long pid() {
        return this.process.pid();
    }

    /** Whether the child has not exited yet; a paused child is alive. */
    public boolean isAlive() {
        return this.process.isAlive();
    }

    /** A snapshot of the stdout lines printed so far. */
    public List<String> lines() {
        synchronized (this.lines) {
            return List.copyOf(this.lines);
        }
    }

    /**
     * Waits until some stdout line, printed before or during this call, matches.
     * @return the first matching line
     * @throws AssertionError if no line matches within the timeout or the child's stdout ends first,
     * with the child's recent output in the message
     */
    public String awaitLine(Predicate<String> condition, Duration timeout) {
        return awaitLineFrom(0, condition, timeout);
    }

    /**
     * Sends a command and waits for its answer: the first stdout line printed after the command was
     * sent that matches, so an earlier answer to the same command is not taken for this one.
     * @return the matching line
     * @throws AssertionError as {@link #awaitLine} does
     */
    public String request(String command, Predicate<String> answer, Duration timeout) {
        int printedBefore;
        synchronized (this.lines) {
            printedBefore = this.lines.size();
        }
        sendLine(command);
        return awaitLineFrom(printedBefore, answer, timeout);
    }

    private String awaitLineFrom(int firstIndex, Predicate<String> condition, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this.lines) {
            int checked = firstIndex;
            while (true) {
                for (; checked < this.lines.size(); checked++) {
                    if (condition.test(this.lines.get(checked))) {
                        return this.lines.get(checked);
                    }
                }
                if (this.stdoutClosed) {
                    throw new AssertionError("No matching line: " + this.name + " closed its stdout (exit code "
                            + exitCodeIfExited() + ")" + diagnostics());
                }
                long remainingNanos = deadline - System.nanoTime();
                if (remainingNanos <= 0) {
                    throw new AssertionError("No matching line from " + this.name + " within " + timeout
                            + diagnostics());
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this.lines, remainingNanos);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("Interrupted while waiting for output of " + this.name, ex);
                }
            }
        }
    }

    /** Writes one line to the child's stdin. */
    public void sendLine(String line) {
        try {
            synchronized (this.stdin) {
                this.stdin.write(line + System.lineSeparator());
                this.stdin.flush();
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not write to the stdin of " + this.name, ex);
        }
    }

    /**
     * Waits for the child to exit, and for its last stdout lines to be collected.
     * @return the exit code (128 + signal number when a signal ended it, e.g. 137 for SIGKILL)
     * @throws AssertionError if it is still running after the timeout
     */
    public int waitFor(Duration timeout) {
        try {
            if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(this.name + " did not exit within " + timeout + diagnostics());
            }
            // Output the child wrote just before exiting may still be in the pipe.
            this.stdoutReader.join(EXIT_TIMEOUT.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for " + this.name + " to exit", ex);
        }
        return this.process.exitValue();
    }

    /** Crashes the child (SIGKILL) and waits until it is gone. */
    public synchronized void kill() {
        // Through the handle: Process.destroyForcibly() would also close our end of the child's stdout,
        // losing lines still in the pipe.
        this.process.toHandle().destroyForcibly();
        ProcessSupport.awaitExit(this.process, EXIT_TIMEOUT, this.name);
        this.paused = false;
    }

    /**
     * Asks the child to shut down (SIGTERM), which runs its shutdown hooks; does not wait, see
     * {@link #waitFor}. A paused child is resumed first, since it could not act on the signal.
     */
    public synchronized void terminate() {
        resume();
        // Through the handle: Process.destroy() would also close the pipes, so the child would see stdin end
        // (and might exit on that instead) and its output during shutdown would be lost.
        this.process.toHandle().destroy();
    }

    /** Freezes the child (SIGSTOP), like a long GC pause; returns once it is stopped. */
    public synchronized void pause() {
        if (!this.process.isAlive()) {
            throw new IllegalStateException("Cannot pause " + this.name + ": it has exited");
        }
        ProcessSupport.signal(pid(), "STOP");
        ProcessSupport.awaitStopped(pid(), true, EXIT_TIMEOUT);
        this.paused = true;
    }

    /** Continues a {@link #pause() paused} child (SIGCONT). Does nothing if it is not paused. */
    public synchronized void resume() {
        if (this.paused && this.process.isAlive()) {
            ProcessSupport.signal(pid(), "CONT");
            ProcessSupport.awaitStopped(pid(), false, EXIT_TIMEOUT);
        }
        this.paused = false;
    }

    /** The last lines of the child's stderr. */
    public String stderrTail() {
        return ProcessSupport.tail(this.stderrLog, TAIL_LINES);
    }

    /** Kills the child if it still runs (SIGKILL) and deletes its stderr log. Idempotent. */
    @Override
    public synchronized void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        try {
            if (this.process.isAlive()) {
                this.process.destroyForcibly();
                ProcessSupport.awaitExit(this.process, EXIT_TIMEOUT, this.name);
            }
        }
        finally {
            try {
                this.stdin.close();
            }
            catch (IOException ex) {
                // The pipe is already broken because the child is gone: nothing left to release.
            }
            ProcessSupport.deleteRecursively(this.tempDir);
            ProcessSupport.removeShutdownHook(this.shutdownHook);
        }
    }

    private String exitCodeIfExited() {
        return this.process.isAlive() ? "none, still running" : Integer.toString(this.process.exitValue());
    }

    private String diagnostics() {
        List<String> snapshot = lines();
        List<String> stdoutTail = snapshot.subList(Math.max(0, snapshot.size() - TAIL_LINES), snapshot.size());
        return System.lineSeparator() + "  last stdout lines:" + indented(stdoutTail.stream())
                + System.lineSeparator() + "  last stderr lines (" + this.stderrLog + "):"
                + indented(stderrTail().lines());
    }

    private static String indented(Stream<String> lines) {
        return lines.map(line -> System.lineSeparator() + "    " + line).collect(Collectors.joining());
    }

    @Override
    public String toString() {
        return this.name;
    }

    /** Collects what the child JVM runs with; {@link #start()} starts it. */
    public static final class Builder {

        private final Class<?> mainClass;

        private final List<String> jvmArgs = new ArrayList<>();

        private final List<String> args = new ArrayList<>();

        private Path javaHome;

        private Builder(Class<?> mainClass) {
            this.mainClass = mainClass;
        }

        /** JVM options, placed after the defaults so that they win (e.g. {@code -Xmx512m}). */
        public Builder jvmArgs(String... jvmArgs) {
            this.jvmArgs.addAll(Arrays.asList(jvmArgs));
            return this;
        }

        /**
         * Runs the child on the JDK installed at {@code javaHome} instead of the one running the
         * tests, for example a newer one for features the build's Java baseline lacks. The test
         * classes still target the baseline, so they run there too.
         */
        public Builder javaHome(Path javaHome) {
            this.javaHome = javaHome;
            return this;
        }

        /** A {@code -Dkey=value} JVM option. */
        public Builder systemProperty(String key, String value) {
            this.jvmArgs.add("-D" + key + "=" + value);
            return this;
        }

        /** Program arguments passed to {@code main}. */
        public Builder args(String... args) {
            this.args.addAll(Arrays.asList(args));
            return this;
        }

        /** Starts the child JVM; returns as soon as the process exists (await a line to know it is ready). */
        public JvmProcess start() {
            return new JvmProcess(this);
        }

    }

}
