package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import com.sun.security.auth.module.UnixSystem;
import org.jspecify.annotations.Nullable;

/**
 * A real SQL database server running as a child process of the test JVM, for the JDBC store's
 * tests: a private instance on a free loopback port, with its data, Unix socket and logs in a
 * temporary directory, reached as one user with a random password that only this instance knows.
 * {@link PostgresServer} and {@link MariaDbServer} are the two kinds.
 * <p>
 * Start-up creates the data directory once and returns when a JDBC connection runs
 * {@code SELECT 1}. {@link #kill()} is a crash: SIGKILL to the server and every process it
 * started; {@link #restart()} starts it again on the same port and data, so committed data
 * survives. {@link #backUp()} copies the data aside and {@link #restore} puts such a copy back, as
 * a restore of an older backup or a failover to a replica that lagged would.
 * {@link #pause()} freezes the server and all its processes (SIGSTOP): open connections
 * stay open and nothing answers until {@link #resume()}. {@link #close()} kills it and deletes the
 * directory; a shutdown hook does the same when a test never gets to close it.
 * <p>
 * A server started with a steppable clock runs under libfaketime (Debian's {@code libfaketime},
 * installed by {@code scripts/test.sh} and {@code scripts/nemesis.sh}): {@link #stepClock} sets the
 * offset of its wall clock from the machine's, which every server process reads at its next look at
 * the clock (libfaketime re-reads the offset file each time, so that the server's processes never
 * disagree on the time, as they could not on a real machine); its monotonic clock is left alone.
 * <p>
 * PostgreSQL refuses to run as root, and no database server should. When the test JVM runs as
 * root (as it does in CI), the server and its set-up tools run as the unprivileged user
 * {@code nobody} through {@code setpriv}, and the directory belongs to that user.
 */
public abstract class DatabaseServer implements AutoCloseable {

    /** Bounds start-up and recovery after a crash; generous for a loaded 2-core machine. */
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    /** Bounds creating the data directory ({@code initdb}, {@code mariadb-install-db}). */
    private static final Duration INITIALIZE_TIMEOUT = Duration.ofSeconds(120);

    static final Duration EXIT_TIMEOUT = Duration.ofSeconds(15);

    /** Bounds each readiness probe, so that a probe cannot stall on a server that is not up yet. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    /** Bounds {@link #connect()}'s connection set-up. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** Bounds every read of a {@link #connect()} connection, so a test never hangs on a frozen server. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    /** Only port clashes are retried: the port is free when chosen but may be taken before the server binds it. */
    private static final int START_ATTEMPTS = 3;

    static final int LOG_TAIL_LINES = 40;

    private static final String SERVER_USER = "nobody";

    /**
     * How long after {@link #stepClock} returns a statement of the server may still run on the old
     * offset: one that read the clock just before the step (libfaketime caches nothing).
     */
    public static final Duration CLOCK_STEP_DELAY = Duration.ofMillis(200);

    /** Where libfaketime reads the offset from, if the server runs under it. */
    private @Nullable Path clockFile;

    private Duration clockOffset = Duration.ZERO;

    private final Path directory;

    private final String password;

    private final Thread shutdownHook;

    private int port;

    private @Nullable Process process;

    private boolean paused;

    private @Nullable String lastProbeFailure;

    private int backups;

    /**
     * Creates the temporary directory, owned by the user the server runs as.
     * @param kind the directory's name prefix, e.g. {@code postgres}
     */
    protected DatabaseServer(String kind) {
        try {
            this.directory = Files.createTempDirectory("distlock-" + kind + "-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create a directory for " + kind, ex);
        }
        handOver(this.directory);
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        this.password = HexFormat.of().formatHex(random);
        this.shutdownHook = ProcessSupport.addShutdownHook("distlock-" + kind + "-cleanup", this::close);
    }

    /**
     * Creates the data directory, then starts the server on a free port and waits until it
     * accepts connections; closes it if any of that fails.
     * @param server a server just constructed
     * @return the running server
     */
    protected static <S extends DatabaseServer> S start(S server) {
        return start(server, false);
    }

    /**
     * As {@link #start(DatabaseServer)}, optionally with a clock that {@link #stepClock} steps.
     * @param steppableClock whether the server runs under libfaketime
     */
    protected static <S extends DatabaseServer> S start(S server, boolean steppableClock) {
        DatabaseServer base = server;
        try {
            if (steppableClock) {
                base.clockFile = base.directory.resolve("faketime-offset");
                base.writeClockOffset(Duration.ZERO);
            }
            base.initialize();
            base.startOnFreePort();
            return server;
        }
        catch (RuntimeException ex) {
            base.close();
            throw ex;
        }
    }

    /** Creates the data directory in {@link #directory()}, with {@link #runAsServerUser}. */
    protected abstract void initialize();

    /** @return the directory of the server's data, in {@link #directory()} */
    protected abstract Path dataDirectory();

    /** @return the server's command line for {@link #port()} */
    protected abstract List<String> serverCommand();

    /** @return the file the server logs to, whose tail failure messages show */
    protected abstract Path logFile();

    /**
     * The driver's connection properties that bound the connection's set-up and each read.
     * @param connectTimeout bound on connecting and logging in
     * @param readTimeout bound on each read from the server
     * @return the properties, without user and password
     */
    protected abstract Properties timeoutProperties(Duration connectTimeout, Duration readTimeout);

    /** @return e.g. {@code PostgreSQL}, for messages */
    protected abstract String productName();

    /** @return the JDBC URL of the server's database */
    public abstract String jdbcUrl();

    /** @return the user the tests log in as; it may do anything in the database */
    public abstract String username();

    /** @return that user's password, random per server */
    public String password() {
        return this.password;
    }

    /** @return the host clients connect to */
    public String host() {
        return "127.0.0.1";
    }

    /** @return the port the server listens on; the same across {@link #restart()} */
    public int port() {
        return this.port;
    }

    /** @return the process id of the running server (its main process) */
    public synchronized long pid() {
        return running().pid();
    }

    /** @return the server's data, socket and log directory */
    public Path directory() {
        return this.directory;
    }

    /**
     * Opens a connection as {@link #username()}, with connection set-up bounded by 10 s and each
     * read by 30 s, so that a test never hangs on a frozen or dead server.
     * @return a new connection; the caller closes it
     * @throws SQLException if the server refuses or does not answer in time
     */
    public Connection connect() throws SQLException {
        return connect(CONNECT_TIMEOUT, READ_TIMEOUT);
    }

    private Connection connect(Duration connectTimeout, Duration readTimeout) throws SQLException {
        Properties properties = timeoutProperties(connectTimeout, readTimeout);
        properties.setProperty("user", username());
        properties.setProperty("password", this.password);
        return DriverManager.getConnection(jdbcUrl(), properties);
    }

    /**
     * Kills the server and every process it started with SIGKILL, as a crash would; the data stays
     * for {@link #restart()}. Does nothing if it is not running.
     */
    public synchronized void kill() {
        Process running = this.process;
        if (running != null && running.isAlive()) {
            // Frozen first, so it cannot start another process between the snapshot and the kill.
            signalUnlessGone(running.toHandle(), "STOP");
            List<ProcessHandle> started = running.descendants().toList();
            running.destroyForcibly();
            started.forEach(ProcessHandle::destroyForcibly);
            ProcessSupport.awaitExit(running, EXIT_TIMEOUT, description());
            if (!ProcessSupport.poll(EXIT_TIMEOUT, () -> started.stream().allMatch(DatabaseServer::isGone))) {
                throw new IllegalStateException("Processes of " + description() + " outlived SIGKILL for " + EXIT_TIMEOUT);
            }
            if (this.clockFile != null) {
                deleteFaketimeSharedMemory(running.pid());
            }
        }
        this.paused = false;
    }

    /** Starts the server again on the same port and data, after a {@link #kill()} or while running. */
    public synchronized void restart() {
        kill();
        launch();
    }

    /**
     * Copies the server's data aside, as a backup or a replica taken at this moment: the server is
     * killed first, so the copy is what a crash would leave (as a snapshot of its disk is), then
     * started again on its data.
     * @return the copy, for {@link #restore}
     */
    public synchronized Path backUp() {
        kill();
        Path copy = this.directory.resolve("backup-" + (++this.backups));
        copyTree(dataDirectory(), copy);
        launch();
        return copy;
    }

    /**
     * Puts a {@link #backUp() copy} back in place of the server's data and starts the server on it,
     * as a restore of that backup or a failover to a replica that had replicated only that much
     * would: whatever was committed after the copy is gone, sequences and counters included.
     * @param backup a copy of this server's data
     */
    public synchronized void restore(Path backup) {
        kill();
        ProcessSupport.deleteRecursively(dataDirectory());
        copyTree(backup, dataDirectory());
        launch();
    }

    /** Copies directories and regular files (a socket or a pipe is the running server's and stays behind). */
    private static void copyTree(Path from, Path to) {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(path));
                }
                else if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
                    Files.copy(path, target, StandardCopyOption.COPY_ATTRIBUTES);
                }
                else {
                    continue;
                }
                handOver(target);
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not copy " + from + " to " + to, ex);
        }
    }

    /**
     * Freezes the server and every process it started (SIGSTOP), the main process first so that it
     * starts no other meanwhile: connections stay open, nothing answers, new connections hang.
     */
    public synchronized void pause() {
        Process running = running();
        ProcessSupport.signal(running.pid(), "STOP");
        ProcessSupport.awaitStopped(running.pid(), true, EXIT_TIMEOUT);
        List<ProcessHandle> started = running.descendants().toList();
        started.forEach(handle -> signalUnlessGone(handle, "STOP"));
        if (!ProcessSupport.poll(EXIT_TIMEOUT, () -> started.stream().allMatch(h -> isGone(h) || isStopped(h)))) {
            throw new IllegalStateException("Processes of " + description() + " did not stop within " + EXIT_TIMEOUT);
        }
        this.paused = true;
    }

    /** Continues a {@link #pause() paused} server (SIGCONT), its main process last. Does nothing if it is not paused. */
    public synchronized void resume() {
        if (this.paused) {
            Process running = running();
            List<ProcessHandle> started = running.descendants().toList();
            started.forEach(handle -> signalUnlessGone(handle, "CONT"));
            ProcessSupport.signal(running.pid(), "CONT");
            ProcessSupport.awaitStopped(running.pid(), false, EXIT_TIMEOUT);
            if (!ProcessSupport.poll(EXIT_TIMEOUT, () -> started.stream().noneMatch(DatabaseServer::isStopped))) {
                throw new IllegalStateException("Processes of " + description() + " did not continue within " + EXIT_TIMEOUT);
            }
            this.paused = false;
        }
    }

    /**
     * Steps the server's wall clock to {@code offset} from the machine's (its monotonic clock stays):
     * {@code -30s} sets it 30 s behind, {@link Duration#ZERO} back to the machine's. Every process of
     * the server reads the new offset within {@link #CLOCK_STEP_DELAY}; this does not wait for that.
     * @param offset whole seconds
     * @throws IllegalStateException if the server was not started with a steppable clock
     */
    public synchronized void stepClock(Duration offset) {
        if (this.clockFile == null) {
            throw new IllegalStateException(description() + " was not started with a steppable clock");
        }
        if (offset.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("a clock offset is whole seconds, but was " + offset);
        }
        writeClockOffset(offset);
    }

    /** @return the offset of the server's wall clock from the machine's that {@link #stepClock} set last */
    public synchronized Duration clockOffset() {
        return this.clockOffset;
    }

    /** Replaces the offset file in one rename, so that no process reads half of it. */
    private void writeClockOffset(Duration offset) {
        Path file = this.clockFile;
        Path next = file.resolveSibling(file.getFileName() + ".next");
        long seconds = offset.toSeconds();
        try {
            Files.writeString(next, ((seconds < 0) ? "-" : "+") + Math.abs(seconds) + "s\n", StandardCharsets.US_ASCII);
            Files.setPosixFilePermissions(next, PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not write the clock offset " + file, ex);
        }
        this.clockOffset = offset;
    }

    /**
     * @return the environment that runs the server under libfaketime, reading its offset from
     * {@link #clockFile}; empty if its clock is not steppable
     */
    private Map<String, String> clockEnvironment() {
        if (this.clockFile == null) {
            return Map.of();
        }
        return Map.of("LD_PRELOAD", libfaketime().toString(), "FAKETIME_TIMESTAMP_FILE", this.clockFile.toString(),
                // Every look at the clock reads the offset file (a few microseconds): with libfaketime's
                // default cache, each process kept the old offset for up to its cache's age, and a session
                // that one process renewed on a clock stepped back was already expired on the clock of another.
                "FAKETIME_NO_CACHE", "1",
                // Timeouts and waits that run on the monotonic clock stay real: only the wall clock steps.
                "FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }

    /**
     * Deletes what libfaketime left in {@code /dev/shm} for a server process: the process that loads
     * it first (the server's main process; setpriv and env exec it in the same process) creates a
     * shared memory segment and a semaphore named after its pid, which its children share and
     * nobody removes. A SIGKILL leaves them, and a server is killed or restarted many times in a
     * nemesis run.
     */
    private static void deleteFaketimeSharedMemory(long pid) {
        for (String name : new String[] { "faketime_shm_" + pid, "sem.faketime_sem_" + pid }) {
            try {
                Files.deleteIfExists(Path.of("/dev/shm", name));
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not delete /dev/shm/" + name + " that libfaketime left", ex);
            }
        }
    }

    /** @return Debian's libfaketime (package {@code libfaketime}), in the machine's multiarch directory */
    static Path libfaketime() {
        try (Stream<Path> architectures = Files.list(Path.of("/usr/lib"))) {
            return architectures.map((directory) -> directory.resolve("faketime/libfaketime.so.1"))
                .filter(Files::isReadable)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("No libfaketime.so.1 under /usr/lib/*/faketime: install "
                        + "it with 'apt-get install -y faketime' (scripts/test.sh and scripts/nemesis.sh do)"));
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not look for libfaketime under /usr/lib", ex);
        }
    }

    /** Kills the server and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        kill();
        ProcessSupport.deleteRecursively(this.directory);
        ProcessSupport.removeShutdownHook(this.shutdownHook);
    }

    /**
     * Runs a set-up tool as the server's user in the server's directory and waits for it to succeed.
     * @param command the tool's command line
     * @param log the file its output goes to
     * @throws IllegalStateException with the log's tail if it fails or does not finish in time
     */
    protected void runAsServerUser(List<String> command, Path log) {
        Process tool = startAsServerUser(command, log);
        try {
            ProcessSupport.awaitExit(tool, INITIALIZE_TIMEOUT, command.get(0));
        }
        catch (IllegalStateException ex) {
            tool.destroyForcibly();
            throw ex;
        }
        if (tool.exitValue() != 0) {
            throw new IllegalStateException(command.get(0) + " failed with exit code " + tool.exitValue() + "; output:\n"
                    + ProcessSupport.tail(log, LOG_TAIL_LINES));
        }
    }

    /**
     * Writes a file only the server's user can read, e.g. a password file.
     * @param file the file, in {@link #directory()}
     * @param content its text
     */
    protected void writePrivateFile(Path file, String content) {
        try {
            Files.writeString(file, content, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not write " + file, ex);
        }
        handOver(file);
    }

    /**
     * Creates a directory that the server's user owns.
     * @param directory the directory, in {@link #directory()}
     */
    protected void createServerDirectory(Path directory) {
        try {
            Files.createDirectories(directory);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create " + directory, ex);
        }
        handOver(directory);
    }

    private Process startAsServerUser(List<String> command, Path log) {
        return startAsServerUser(command, log, Map.of());
    }

    private Process startAsServerUser(List<String> command, Path log, Map<String, String> extraEnvironment) {
        List<String> full = new ArrayList<>();
        if (runsAsRoot()) {
            int[] ids = serverUserIds();
            full.addAll(List.of(ProcessSupport.locateBinary("SETPRIV_BIN", "setpriv", "util-linux").toString(),
                    "--reuid=" + ids[0], "--regid=" + ids[1], "--clear-groups", "--"));
        }
        if (!extraEnvironment.isEmpty()) {
            // Set by env(1) after setpriv, so that the preloaded libfaketime starts in the server's own process, as
            // its user: loaded into setpriv, it would create its shared memory as root, which the server may not open.
            full.add("/usr/bin/env");
            extraEnvironment.forEach((name, value) -> full.add(name + "=" + value));
        }
        full.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(full).directory(this.directory.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Map<String, String> environment = builder.environment();
        // Keep the caller's client settings (PGPORT, MYSQL_HOST, ...) away from the server and its tools.
        environment.keySet().removeIf(name -> name.startsWith("PG") || name.startsWith("MYSQL") || name.startsWith("MARIADB"));
        environment.put("HOME", this.directory.toString());
        try {
            return builder.start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not start " + String.join(" ", full), ex);
        }
    }

    private void startOnFreePort() {
        this.port = ProcessSupport.startOnFreePort(START_ATTEMPTS, port -> {
            this.port = port;
            launch();
        }, this::kill, this::logFile);
    }

    private synchronized void launch() {
        this.lastProbeFailure = null;
        Process started = startAsServerUser(serverCommand(), standardOutput(), clockEnvironment());
        this.process = started;
        boolean accepting = ProcessSupport.poll(START_TIMEOUT, () -> !started.isAlive() || acceptsConnections());
        if (!started.isAlive() || !accepting) {
            throw new IllegalStateException(description() + " did not accept connections within " + START_TIMEOUT
                    + (started.isAlive() ? "" : " (exited with " + started.exitValue() + ")")
                    + (this.lastProbeFailure == null ? "" : "; last attempt: " + this.lastProbeFailure) + "; log tail:\n"
                    + ProcessSupport.tail(logFile(), LOG_TAIL_LINES)
                    + (logFile().equals(standardOutput()) ? ""
                            : "\nstdout and stderr:\n" + ProcessSupport.tail(standardOutput(), LOG_TAIL_LINES)));
        }
    }

    /** @return the file the server's standard output and error go to */
    protected Path standardOutput() {
        return this.directory.resolve("stdout.log");
    }

    private boolean acceptsConnections() {
        try (Connection connection = connect(PROBE_TIMEOUT, PROBE_TIMEOUT); Statement statement = connection.createStatement()) {
            statement.execute("SELECT 1");
            return true;
        }
        catch (SQLException ex) {
            // Not listening yet, or still starting up or recovering.
            this.lastProbeFailure = ex.toString();
            return false;
        }
    }

    private Process running() {
        Process running = this.process;
        if (running == null || !running.isAlive()) {
            throw new IllegalStateException(description() + " is not running");
        }
        return running;
    }

    /** @return e.g. {@code PostgreSQL on port 41234} */
    protected String description() {
        return productName() + " on port " + this.port;
    }

    private static void signalUnlessGone(ProcessHandle handle, String signal) {
        try {
            ProcessSupport.signal(handle.pid(), signal);
        }
        catch (IllegalStateException ex) {
            // A process that ended meanwhile (a backend whose client left) needs no signal.
            if (!isGone(handle)) {
                throw ex;
            }
        }
    }

    /** Gone means exited, or a zombie that nobody reaps (in a container, process 1 may not). */
    static boolean isGone(ProcessHandle handle) {
        return !handle.isAlive() || state(handle) == 'Z';
    }

    private static boolean isStopped(ProcessHandle handle) {
        char state = state(handle);
        return state == 'T' || state == 't';
    }

    /** @return the process state letter from /proc, or {@code 'X'} if the process is gone */
    private static char state(ProcessHandle handle) {
        try {
            // Format: "pid (comm) state ...", comm may itself contain spaces and parentheses.
            String content = Files.readString(Path.of("/proc", Long.toString(handle.pid()), "stat"), StandardCharsets.ISO_8859_1);
            return content.substring(content.lastIndexOf(')') + 2).charAt(0);
        }
        catch (NoSuchFileException ex) {
            return 'X';
        }
        catch (IOException ex) {
            // Exited between the open and the read: the kernel answers ESRCH ("No such process").
            if (!handle.isAlive()) {
                return 'X';
            }
            throw new UncheckedIOException(ex);
        }
    }

    private static boolean runsAsRoot() {
        return new UnixSystem().getUid() == 0;
    }

    /** Gives a file to the server's user when the tests run as root; otherwise it is the tests' user's already. */
    private static void handOver(Path file) {
        if (!runsAsRoot()) {
            return;
        }
        int[] ids = serverUserIds();
        try {
            Files.setAttribute(file, "unix:uid", ids[0]);
            Files.setAttribute(file, "unix:gid", ids[1]);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not give " + file + " to the user " + SERVER_USER, ex);
        }
    }

    /** @return the user id and group id of {@code nobody}, from /etc/passwd */
    private static int[] serverUserIds() {
        Path passwd = Path.of("/etc/passwd");
        try {
            for (String line : Files.readAllLines(passwd, StandardCharsets.UTF_8)) {
                String[] fields = line.split(":");
                if (fields.length > 3 && fields[0].equals(SERVER_USER)) {
                    return new int[] { Integer.parseInt(fields[2]), Integer.parseInt(fields[3]) };
                }
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not read " + passwd, ex);
        }
        throw new IllegalStateException("The tests run as root, and the database servers must not: no user '"
                + SERVER_USER + "' in " + passwd + " to run them as");
    }
}
