package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.etcd.jetcd.Client;

/**
 * Real etcd members running as child processes of the test JVM.
 * <p>
 * {@link #single()} and {@link #threeMembers()} return a cluster that is already started: every
 * member answers {@code /health} with {@code true} (which in etcd 3.4 means it knows a leader and
 * a quorum read succeeded) and all members agree on the leader. Each member listens on free
 * loopback ports and keeps its data and its log in a temporary directory. {@link #close()} kills
 * every member and deletes those directories; a shutdown hook does the same when a test never
 * gets to close the cluster. Only a JVM killed with SIGKILL leaves its etcd processes behind.
 * <p>
 * The binary is {@code $ETCD_BIN}, else {@code /usr/bin/etcd}, else {@code etcd} on the
 * {@code PATH}; the flags are those of etcd 3.4 (Debian's {@code etcd-server}). Members use a
 * 100 ms heartbeat and a 1 s election timeout, so a lost leader is replaced within a few seconds.
 */
public final class EtcdCluster implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(15);

    /** Bounds one HTTP probe, so that an unresponsive (paused, overloaded) member cannot stall a wait. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    /** Only port clashes are retried: the ports are free when chosen but may be taken before etcd binds them. */
    private static final int START_ATTEMPTS = 3;

    private static final int LOG_TAIL_LINES = 40;

    private static final Pattern HEALTHY = Pattern.compile("\"health\"\\s*:\\s*\"true\"");

    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\"\\s*:\\s*\"(\\d+)\"");

    private static final Pattern LEADER_ID = Pattern.compile("\"leader\"\\s*:\\s*\"(\\d+)\"");

    /* HTTP/1.1 on purpose: etcd's client port multiplexes gRPC and HTTP and need not honour an h2c upgrade. */
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(PROBE_TIMEOUT)
            .build();

    private final Path etcdBinary;

    private final Path directory;

    private final String clusterToken;

    private final List<Member> members;

    private final Thread shutdownHook;

    private volatile boolean closed;

    private EtcdCluster(Path etcdBinary, int size) {
        this.etcdBinary = etcdBinary;
        int[] ports = ProcessSupport.freeLoopbackPorts(2 * size);
        try {
            this.directory = Files.createTempDirectory("distlock-etcd-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create a temporary directory for etcd", ex);
        }
        this.clusterToken = "distlock-test-" + UUID.randomUUID();
        List<Member> created = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            created.add(new Member(i, ports[2 * i], ports[2 * i + 1]));
        }
        this.members = Collections.unmodifiableList(created);
        this.shutdownHook = ProcessSupport.addShutdownHook("etcd-cluster-cleanup", this::close);
    }

    /** Starts a one-member cluster and waits until it is healthy. */
    public static EtcdCluster single() {
        return start(1);
    }

    /** Starts a three-member cluster and waits until every member is healthy and they agree on a leader. */
    public static EtcdCluster threeMembers() {
        return start(3);
    }

    private static EtcdCluster start(int size) {
        Path binary = locateEtcdBinary();
        RuntimeException failure = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            EtcdCluster cluster = new EtcdCluster(binary, size);
            try {
                cluster.startAllMembers();
                return cluster;
            }
            catch (RuntimeException ex) {
                boolean portTaken = cluster.anyLogContains("address already in use");
                try {
                    cluster.close();
                }
                catch (RuntimeException closeFailure) {
                    ex.addSuppressed(closeFailure);
                }
                if (failure != null) {
                    ex.addSuppressed(failure);
                }
                failure = ex;
                if (!portTaken) {
                    break;
                }
            }
        }
        throw failure;
    }

    /** @return {@code $ETCD_BIN}, else Debian's etcd, else {@code etcd} on the PATH */
    public static Path locateEtcdBinary() {
        return ProcessSupport.locateBinary("ETCD_BIN", "etcd", "etcd-server");
    }

    private void startAllMembers() {
        // Members of a new cluster wait for each other, so all of them must be started before any is awaited.
        for (Member member : this.members) {
            member.launch("new");
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        awaitHealthy(this.members, START_TIMEOUT);
        awaitLeader(remaining(deadline));
    }

    /**
     * Waits until every given member answers {@code /health} with {@code true}. Fails as soon as
     * one of them exits, since the others may then never reach a quorum.
     */
    private void awaitHealthy(List<Member> expected, Duration timeout) {
        Set<Member> pending = new LinkedHashSet<>(expected);
        boolean settled = ProcessSupport.poll(timeout, () -> {
            pending.removeIf(Member::isHealthy);
            return pending.isEmpty() || expected.stream().anyMatch(member -> !member.isRunning());
        });
        Optional<Member> exited = expected.stream().filter(member -> !member.isRunning()).findFirst();
        if (exited.isPresent()) {
            throw new IllegalStateException(exited.get().description() + " exited before the cluster became healthy"
                    + System.lineSeparator() + describeMembers());
        }
        if (!settled) {
            throw new IllegalStateException("etcd members " + pending.stream().map(member -> member.name).toList()
                    + " did not become healthy within " + timeout + System.lineSeparator() + describeMembers());
        }
    }

    private static Duration remaining(long deadlineNanos) {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    /** Number of members, running or not. */
    public int size() {
        return this.members.size();
    }

    /** The member with the given index, from 0 to {@code size() - 1}. */
    public Member member(int index) {
        return this.members.get(index);
    }

    /** Every member's client URL ({@code http://127.0.0.1:PORT}), including members that are down. */
    public List<String> clientEndpoints() {
        return this.members.stream().map(Member::clientEndpoint).toList();
    }

    /** The first member's client URL. */
    public String clientEndpoint() {
        return this.members.get(0).clientEndpoint();
    }

    /** A new jetcd client for all members; the caller closes it. */
    public Client newClient() {
        return Client.builder().endpoints(clientEndpoints().toArray(String[]::new)).build();
    }

    /**
     * The index of the current leader, or -1 when there is none right now: some running member
     * does not answer, the running members name different leaders, or the leader they name is not
     * running (a paused or killed member whose loss they have not noticed yet). Paused and stopped
     * members are not asked.
     */
    public int leaderIndex() {
        List<Member> live = this.members.stream().filter(Member::isLive).toList();
        if (live.isEmpty()) {
            return -1;
        }
        // Ask in parallel so that one slow member does not add its timeout to the others'.
        List<CompletableFuture<Optional<MemberStatus>>> requests = live.stream().map(Member::statusAsync).toList();
        List<Optional<MemberStatus>> statuses = requests.stream().map(CompletableFuture::join).toList();
        if (statuses.stream().anyMatch(Optional::isEmpty)) {
            return -1;
        }
        Set<String> leaders = statuses.stream().map(status -> status.get().leaderId()).collect(Collectors.toSet());
        if (leaders.size() != 1 || leaders.contains("0")) {
            return -1;
        }
        String leaderId = leaders.iterator().next();
        for (int i = 0; i < live.size(); i++) {
            if (statuses.get(i).get().memberId().equals(leaderId)) {
                return live.get(i).index();
            }
        }
        return -1;
    }

    /**
     * Waits until the running members agree on a running leader.
     * @return the leader's index
     * @throws IllegalStateException if that does not happen within the timeout, with the members' log tails
     */
    public int awaitLeader(Duration timeout) {
        int[] leader = { -1 };
        if (ProcessSupport.poll(timeout, () -> (leader[0] = leaderIndex()) >= 0)) {
            return leader[0];
        }
        throw new IllegalStateException("etcd cluster has no leader agreed on by its running members after " + timeout
                + System.lineSeparator() + describeMembers());
    }

    /**
     * Brings the cluster back to full strength after a test that killed, stopped or paused members:
     * resumes paused members, restarts stopped ones, and waits until all are healthy and agree on a
     * leader. Meant for {@code @AfterEach} when tests share one cluster.
     */
    public void ensureAllRunning() {
        for (Member member : this.members) {
            member.resume();
        }
        List<Member> restarted = this.members.stream().filter(member -> !member.isRunning()).toList();
        for (Member member : restarted) {
            member.launch("existing");
        }
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        awaitHealthy(this.members, START_TIMEOUT);
        awaitLeader(remaining(deadline));
    }

    /**
     * Kills every member (SIGKILL, paused ones included), waits for them to exit and deletes their
     * data directories and logs. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        RuntimeException failure = null;
        for (Member member : this.members) {
            try {
                // SIGKILL also ends a SIGSTOPped process, so paused members need no resume first.
                member.kill();
            }
            catch (RuntimeException ex) {
                failure = addFailure(failure, ex);
            }
        }
        try {
            ProcessSupport.deleteRecursively(this.directory);
        }
        catch (RuntimeException ex) {
            failure = addFailure(failure, ex);
        }
        ProcessSupport.removeShutdownHook(this.shutdownHook);
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException addFailure(RuntimeException failure, RuntimeException next) {
        if (failure == null) {
            return next;
        }
        failure.addSuppressed(next);
        return failure;
    }

    private boolean anyLogContains(String text) {
        return this.members.stream().anyMatch(member -> ProcessSupport.tail(member.logFile(), 200).contains(text));
    }

    private String describeMembers() {
        return this.members.stream().map(Member::describeWithLog).collect(Collectors.joining(System.lineSeparator()));
    }

    @Override
    public String toString() {
        return "EtcdCluster" + clientEndpoints();
    }

    /** Member ids are unsigned 64-bit numbers, kept as the decimal strings etcd's JSON gateway sends. */
    private record MemberStatus(String memberId, String leaderId) {
    }

    private static Optional<MemberStatus> parseStatus(String json) {
        Matcher memberId = MEMBER_ID.matcher(json);
        Matcher leaderId = LEADER_ID.matcher(json);
        if (!memberId.find() || !leaderId.find()) {
            return Optional.empty();
        }
        return Optional.of(new MemberStatus(memberId.group(1), leaderId.group(1)));
    }

    /**
     * One etcd process of the cluster. Its ports, data directory and log file stay the same for
     * the cluster's lifetime, so a {@link #restart() restarted} member rejoins with its own data.
     */
    public final class Member {

        private final int index;

        private final String name;

        private final int clientPort;

        private final int peerPort;

        private final Path dataDir;

        private final Path logFile;

        private Process process;

        private boolean paused;

        private Member(int index, int clientPort, int peerPort) {
            this.index = index;
            this.name = "m" + index;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            Path memberDir = EtcdCluster.this.directory.resolve(this.name);
            this.dataDir = memberDir.resolve("data");
            this.logFile = memberDir.resolve("etcd.log");
        }

        /** Position of this member in the cluster, as used by {@link EtcdCluster#member(int)}. */
        public int index() {
            return this.index;
        }

        /** {@code http://127.0.0.1:PORT}. */
        public String clientEndpoint() {
            return "http://127.0.0.1:" + this.clientPort;
        }

        private String peerUrl() {
            return "http://127.0.0.1:" + this.peerPort;
        }

        /** A new jetcd client talking to this member only; the caller closes it. */
        public Client newClient() {
            return Client.builder().endpoints(clientEndpoint()).build();
        }

        /** The process id of the current or, once it ended, the last etcd process of this member. */
        public synchronized long pid() {
            if (this.process == null) {
                throw new IllegalStateException("Member " + this.name + " was never started");
            }
            return this.process.pid();
        }

        /** Whether the process is alive; a paused member is running. */
        public synchronized boolean isRunning() {
            return this.process != null && this.process.isAlive();
        }

        /** Whether the member is {@link #pause() paused}. */
        public synchronized boolean isPaused() {
            return this.paused && isRunning();
        }

        private synchronized boolean isLive() {
            return isRunning() && !this.paused;
        }

        /** Directory with this member's etcd data; it survives {@link #kill()} and {@link #restart()}. */
        public Path dataDir() {
            return this.dataDir;
        }

        /** The member's etcd log (stdout and stderr of every run, appended). */
        public Path logFile() {
            return this.logFile;
        }

        /** Crashes the member (SIGKILL) and waits until the process is gone. Does nothing if it is not running. */
        public synchronized void kill() {
            if (isRunning()) {
                this.process.destroyForcibly();
                ProcessSupport.awaitExit(this.process, EXIT_TIMEOUT, description());
            }
            this.paused = false;
        }

        /**
         * Shuts the member down cleanly (SIGTERM) and waits until the process is gone. Does nothing if
         * it is not running. etcd 3.4 hands leadership to another member before it stops.
         */
        public synchronized void stop() {
            if (!isRunning()) {
                return;
            }
            // A stopped process only acts on SIGTERM once it is continued.
            resume();
            this.process.destroy();
            ProcessSupport.awaitExit(this.process, EXIT_TIMEOUT, description());
        }

        /**
         * Freezes the process (SIGSTOP), like a long GC pause or a hung machine: its connections
         * stay open but nothing answers. Returns once the process is stopped.
         */
        public synchronized void pause() {
            if (!isRunning()) {
                throw new IllegalStateException("Cannot pause " + description() + ": it is not running");
            }
            ProcessSupport.signal(this.process.pid(), "STOP");
            ProcessSupport.awaitStopped(this.process.pid(), true, EXIT_TIMEOUT);
            this.paused = true;
        }

        /** Continues a {@link #pause() paused} member (SIGCONT). Does nothing if it is not paused. */
        public synchronized void resume() {
            if (!this.paused) {
                return;
            }
            if (isRunning()) {
                ProcessSupport.signal(this.process.pid(), "CONT");
                ProcessSupport.awaitStopped(this.process.pid(), false, EXIT_TIMEOUT);
            }
            this.paused = false;
        }

        /**
         * Starts the member again with the same data directory and ports, stopping it first if it is
         * running, and waits until it is healthy and agrees with the others on a leader.
         */
        public void restart() {
            synchronized (this) {
                stop();
                launch("existing");
            }
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            awaitHealthy(List.of(this), START_TIMEOUT);
            awaitLeader(remaining(deadline));
        }

        /**
         * Starts the etcd process without waiting for it. A member restarted on its data directory
         * ignores the initial-cluster flags (its membership is in its write-ahead log); "existing"
         * only says it must not bootstrap a new cluster.
         */
        private synchronized void launch(String initialClusterState) {
            if (EtcdCluster.this.closed) {
                throw new IllegalStateException("Cannot start " + description() + ": the cluster is closed");
            }
            String initialCluster = EtcdCluster.this.members.stream()
                    .map(member -> member.name + "=" + member.peerUrl())
                    .collect(Collectors.joining(","));
            List<String> command = List.of(EtcdCluster.this.etcdBinary.toString(),
                    "--name", this.name,
                    "--data-dir", this.dataDir.toString(),
                    "--listen-client-urls", clientEndpoint(),
                    "--advertise-client-urls", clientEndpoint(),
                    "--listen-peer-urls", peerUrl(),
                    "--initial-advertise-peer-urls", peerUrl(),
                    "--initial-cluster", initialCluster,
                    "--initial-cluster-state", initialClusterState,
                    "--initial-cluster-token", EtcdCluster.this.clusterToken,
                    "--heartbeat-interval", "100",
                    "--election-timeout", "1000",
                    "--logger", "zap",
                    "--log-outputs", "stderr");
            try {
                Files.createDirectories(this.logFile.getParent());
                ProcessBuilder builder = new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(this.logFile.toFile()));
                // etcd reads ETCD_* variables as flags; the test environment's must not configure the member.
                builder.environment().keySet().removeIf(variable -> variable.startsWith("ETCD_"));
                this.process = builder.start();
                this.paused = false;
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not start " + description(), ex);
            }
        }

        private boolean isHealthy() {
            HttpRequest request = HttpRequest.newBuilder(URI.create(clientEndpoint() + "/health"))
                    .timeout(PROBE_TIMEOUT)
                    .GET()
                    .build();
            try {
                HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
                return response.statusCode() == 200 && HEALTHY.matcher(response.body()).find();
            }
            catch (IOException ex) {
                return false;
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted while probing " + description(), ex);
            }
        }

        /** The member's own id and the leader it knows, through etcd's JSON gateway; empty if it does not answer. */
        private CompletableFuture<Optional<MemberStatus>> statusAsync() {
            HttpRequest request = HttpRequest.newBuilder(URI.create(clientEndpoint() + "/v3/maintenance/status"))
                    .timeout(PROBE_TIMEOUT)
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build();
            return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                    .thenApply(response -> (response.statusCode() == 200) ? parseStatus(response.body())
                            : Optional.<MemberStatus>empty())
                    .exceptionally(ex -> Optional.empty());
        }

        private synchronized String description() {
            String state = (this.process == null) ? "never started"
                    : isPaused() ? "paused, pid " + this.process.pid()
                    : isRunning() ? "pid " + this.process.pid() : "exited, code " + this.process.exitValue();
            return "etcd member " + this.name + " (" + clientEndpoint() + ", " + state + ")";
        }

        private String describeWithLog() {
            return description() + ", last lines of " + this.logFile + ":" + System.lineSeparator()
                    + ProcessSupport.tail(this.logFile, LOG_TAIL_LINES).lines()
                            .map(line -> "    " + line)
                            .collect(Collectors.joining(System.lineSeparator()));
        }

        @Override
        public String toString() {
            return description();
        }

    }

}
