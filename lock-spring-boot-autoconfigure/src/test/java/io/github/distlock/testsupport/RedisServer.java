package io.github.distlock.testsupport;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A real {@code redis-server} running as a child process of the test JVM, on a free loopback
 * port, with its data and log in a temporary directory.
 * <p>
 * {@link #start(boolean)} returns once the server answers {@code PING}. Without persistence it
 * saves nothing ({@code save ""}, no append-only file), so a {@link #restart()} starts empty, as a
 * Redis restarted without persistence does; with persistence every write is appended and fsynced
 * before Redis answers ({@code appendfsync always}), so a restart keeps every acknowledged write.
 * {@link #close()} kills the process and deletes the directory; a shutdown hook does the same
 * when a test never gets to close it.
 * <p>
 * {@link #startReplicaOf} starts a replica of another server, and {@link #startSentinel} a Sentinel
 * that monitors one (the same binary in Sentinel mode), for failover tests.
 * <p>
 * The binary is {@code $REDIS_BIN}, else {@code /usr/bin/redis-server}, else
 * {@code redis-server} on the {@code PATH} (Debian's {@code redis-server}; {@code scripts/test.sh}
 * installs it when missing).
 */
public final class RedisServer implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(15);

    /** Bounds one command, so that a paused server cannot stall a probe. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    /** Only port clashes are retried: the port is free when chosen but may be taken before Redis binds it. */
    private static final int START_ATTEMPTS = 3;

    private static final int LOG_TAIL_LINES = 40;

    private final boolean persistent;

    private final Path directory;

    /** Started with the role's arguments: a replica's {@code --replicaof}, or a Sentinel's configuration. */
    private final List<String> roleArguments;

    private final Thread shutdownHook;

    private int port;

    private @Nullable Process process;

    private boolean paused;

    private RedisServer(boolean persistent, Path directory, List<String> roleArguments) {
        this.persistent = persistent;
        this.directory = directory;
        this.roleArguments = roleArguments;
        this.shutdownHook = ProcessSupport.addShutdownHook("redis-server-cleanup", this::close);
    }

    /**
     * Starts a server and waits until it answers.
     * @param persistent whether acknowledged writes survive a {@link #restart()}
     * @return the running server
     */
    public static RedisServer start(boolean persistent) {
        return start(persistent, directory -> List.of());
    }

    /**
     * Starts a replica of {@code primary}, without persistence, and waits until it answers.
     * @param primary the server to replicate
     * @return the running replica
     */
    public static RedisServer startReplicaOf(RedisServer primary) {
        return startReplicaOf(primary.host(), primary.port());
    }

    /**
     * Starts a replica of the primary at {@code host:port} (which may be a proxy in front of it),
     * without persistence, and waits until it answers.
     * @param host the primary's host
     * @param port the primary's port
     * @return the running replica
     */
    public static RedisServer startReplicaOf(String host, int port) {
        return start(false, directory -> List.of("--replicaof", host, Integer.toString(port)));
    }

    /**
     * Starts a node for a Redis Cluster, without persistence and without slots; see
     * {@link #createCluster(List)}.
     * @return the running node
     */
    public static RedisServer startClusterNode() {
        return start(false, directory -> List.of("--cluster-enabled", "yes", "--cluster-config-file",
                directory.resolve("nodes.conf").toString(), "--cluster-node-timeout", "2000"));
    }

    /**
     * Makes the nodes one Redis Cluster, the slots spread over them, without replicas, with
     * {@code redis-cli --cluster create} (Debian's {@code redis-tools}, which {@code redis-server}
     * depends on), and waits until every node says the cluster is ok.
     * @param nodes nodes from {@link #startClusterNode()}
     */
    public static void createCluster(List<RedisServer> nodes) {
        List<String> command = new ArrayList<>(List.of(
                ProcessSupport.locateBinary("REDIS_CLI", "redis-cli", "redis-tools").toString(), "--cluster", "create"));
        nodes.forEach(node -> command.add(node.host() + ":" + node.port()));
        command.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
        try {
            Process create = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(nodes.get(0).directory.resolve("cluster-create.log").toFile()))
                .start();
            ProcessSupport.awaitExit(create, START_TIMEOUT, "redis-cli --cluster create");
            if (create.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed; log:\n"
                        + ProcessSupport.tail(nodes.get(0).directory.resolve("cluster-create.log"), LOG_TAIL_LINES));
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not run " + command.get(0), ex);
        }
        for (RedisServer node : nodes) {
            if (!ProcessSupport.poll(START_TIMEOUT, () -> node.command("CLUSTER", "INFO").contains("cluster_state:ok"))) {
                throw new IllegalStateException(node.description() + " never saw the cluster ok");
            }
        }
    }

    /**
     * Starts a Sentinel that monitors {@code primary} as {@code masterName} with a quorum of one.
     * @param primary the primary to monitor
     * @param masterName the name clients ask the Sentinel for
     * @param downAfter how long the primary must not answer before the Sentinel fails over
     * @return the running Sentinel
     */
    public static RedisServer startSentinel(RedisServer primary, String masterName, Duration downAfter) {
        return start(false, directory -> {
            // A Sentinel rewrites its configuration file, so it gets one of its own.
            Path config = directory.resolve("sentinel.conf");
            String text = String.join("\n", "dir " + directory,
                    "sentinel monitor " + masterName + " " + primary.host() + " " + primary.port() + " 1",
                    "sentinel down-after-milliseconds " + masterName + " " + downAfter.toMillis(),
                    "sentinel failover-timeout " + masterName + " " + Math.max(3 * downAfter.toMillis(), 3000), "");
            try {
                Files.writeString(config, text);
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not write " + config, ex);
            }
            return List.of(config.toString(), "--sentinel");
        });
    }

    private static RedisServer start(boolean persistent, java.util.function.Function<Path, List<String>> role) {
        Path directory;
        try {
            directory = Files.createTempDirectory("distlock-redis-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create a directory for redis-server", ex);
        }
        RedisServer server = new RedisServer(persistent, directory, role.apply(directory));
        try {
            server.startOnFreePort();
            return server;
        }
        catch (RuntimeException ex) {
            server.close();
            throw ex;
        }
    }

    private void startOnFreePort() {
        this.port = ProcessSupport.startOnFreePort(START_ATTEMPTS, port -> {
            this.port = port;
            launch();
        }, this::kill, this::logFile);
    }

    /** @return the host clients connect to */
    public String host() {
        return "127.0.0.1";
    }

    /** @return the port the server listens on; the same across {@link #restart()} */
    public int port() {
        return this.port;
    }

    /** @return {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return "redis://" + host() + ":" + this.port;
    }

    /** @return the process id of the running server */
    public synchronized long pid() {
        return running().pid();
    }

    /**
     * Sends one command and returns its reply: a simple string, an integer or a bulk string as
     * text, {@code null} for a nil reply. Bounded by a short timeout.
     * @param arguments the command and its arguments, e.g. {@code "SET", "k", "v"}
     * @return the reply
     * @throws IllegalStateException if Redis answered with an error or not in time
     */
    public @Nullable String command(String... arguments) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host(), this.port), (int) COMMAND_TIMEOUT.toMillis());
            socket.setSoTimeout((int) COMMAND_TIMEOUT.toMillis());
            OutputStream out = socket.getOutputStream();
            StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
            for (String argument : arguments) {
                byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
                request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
            }
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return readReply(new BufferedInputStream(socket.getInputStream()), String.join(" ", arguments));
        }
        catch (IOException ex) {
            throw new IllegalStateException("redis-server on port " + this.port + " did not answer "
                    + arguments[0] + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * @param command a command name in lower case, e.g. {@code "info"}
     * @return how many times the server ran it since it started, as {@code INFO commandstats} says
     * (a call of this method counts as one {@code INFO} once it returned)
     */
    public long commandCalls(String command) {
        String stats = command("INFO", "commandstats");
        String field = "cmdstat_" + command + ":calls=";
        for (String line : stats.split("\r\n")) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length(), line.indexOf(',', field.length())));
            }
        }
        return 0;
    }

    private static @Nullable String readReply(InputStream in, String command) throws IOException {
        String line = readLine(in);
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+', ':' -> {
                return rest;
            }
            case '-' -> throw new IllegalStateException("Redis refused '" + command + "': " + rest);
            case '$' -> {
                int length = Integer.parseInt(rest);
                if (length < 0) {
                    return null;
                }
                byte[] bulk = in.readNBytes(length + 2);
                return new String(bulk, 0, length, StandardCharsets.UTF_8);
            }
            default -> throw new IllegalStateException("Unexpected reply to '" + command + "': " + line);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int previous = -1;
        int current;
        while ((current = in.read()) != -1) {
            if (previous == '\r' && current == '\n') {
                line.setLength(line.length() - 1);
                return line.toString();
            }
            line.append((char) current);
            previous = current;
        }
        throw new IOException("connection closed before a full reply");
    }

    /** Kills the server with SIGKILL, as a crash would; its directory stays for {@link #restart()}. */
    public synchronized void kill() {
        Process running = this.process;
        if (running != null && running.isAlive()) {
            running.destroyForcibly();
            ProcessSupport.awaitExit(running, EXIT_TIMEOUT, description());
        }
        this.paused = false;
    }

    /** Starts the server again on the same port and directory, after a {@link #kill()} or while running. */
    public synchronized void restart() {
        kill();
        launch();
    }

    /** Freezes the server (SIGSTOP): its connections stay open and nothing answers. */
    public synchronized void pause() {
        long pid = running().pid();
        ProcessSupport.signal(pid, "STOP");
        ProcessSupport.awaitStopped(pid, true, EXIT_TIMEOUT);
        this.paused = true;
    }

    /** Continues a {@link #pause() paused} server (SIGCONT). Does nothing if it is not paused. */
    public synchronized void resume() {
        if (this.paused) {
            long pid = running().pid();
            ProcessSupport.signal(pid, "CONT");
            ProcessSupport.awaitStopped(pid, false, EXIT_TIMEOUT);
            this.paused = false;
        }
    }

    /** Kills the server and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        kill();
        ProcessSupport.deleteRecursively(this.directory);
        ProcessSupport.removeShutdownHook(this.shutdownHook);
    }

    /** @return the server's data and log directory */
    public Path directory() {
        return this.directory;
    }

    private synchronized void launch() {
        List<String> command = new ArrayList<>(List.of(binary()));
        boolean sentinel = this.roleArguments.contains("--sentinel");
        // A Sentinel's configuration file comes first; a replica's --replicaof goes with the other options.
        command.addAll(sentinel ? this.roleArguments : List.of());
        command.addAll(List.of("--port", Integer.toString(this.port), "--bind", host(), "--logfile",
                logFile().toString(), "--daemonize", "no"));
        if (!sentinel) {
            command.addAll(List.of("--dir", this.directory.toString(), "--save", "", "--appendonly",
                    this.persistent ? "yes" : "no"));
            if (this.persistent) {
                command.addAll(List.of("--appendfsync", "always"));
            }
            command.addAll(this.roleArguments);
        }
        try {
            this.process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(this.directory.resolve("stdout.log").toFile()))
                .start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not start " + command.get(0), ex);
        }
        Process started = this.process;
        boolean answering = ProcessSupport.poll(START_TIMEOUT, () -> !started.isAlive() || answersPing());
        if (!started.isAlive() || !answering) {
            throw new IllegalStateException(description() + " did not answer PING within " + START_TIMEOUT
                    + (started.isAlive() ? "" : " (exited with " + started.exitValue() + ")") + "; log tail:\n"
                    + ProcessSupport.tail(logFile(), LOG_TAIL_LINES));
        }
    }

    private boolean answersPing() {
        try {
            return "PONG".equals(command("PING"));
        }
        catch (IllegalStateException ex) {
            // Not listening yet, or still loading its data ("-LOADING").
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

    private Path logFile() {
        return this.directory.resolve("redis.log");
    }

    private String description() {
        return "redis-server on port " + this.port;
    }

    private static String binary() {
        return ProcessSupport.locateBinary("REDIS_BIN", "redis-server", "redis-server").toString();
    }
}
