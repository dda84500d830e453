package io.github.distlock.testsupport;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;
import org.jspecify.annotations.Nullable;

/**
 * Real ZooKeeper servers for the tests: the {@code org.apache.zookeeper:zookeeper} jar of the test
 * class path run as child JVMs ({@link QuorumPeerMain}), one per member, on free loopback ports,
 * each with its configuration and data in a temporary directory. One member is a standalone
 * server; three form an ensemble.
 * <p>
 * An ensemble may have {@link #cutQuorumLink cuttable links} between its members: each member then
 * reaches the others' quorum ports through a {@link TcpProxy} of its own, so that one follower can
 * be cut off from the leader while it still serves its clients, as in a partition.
 * <p>
 * {@code tickTime} is 500 ms, so servers grant session timeouts from 1 s to 10 s. Start-up waits
 * until every member answers the {@code srvr} command with its mode (and an ensemble has a leader).
 * {@link #close()} kills every member and deletes the directories; a shutdown hook does the same
 * when a test never gets to close it.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {

    /** The servers' tick: sessions may last from 2 to 20 ticks. */
    public static final Duration TICK = Duration.ofMillis(500);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    private final Path directory;

    private final List<Member> members = new ArrayList<>();

    private final Thread shutdownHook;

    /** The proxy member {@code from} reaches member {@code to}'s quorum port through, by {@code "from->to"} (ids). */
    private final Map<String, TcpProxy> quorumLinks = new ConcurrentHashMap<>();

    private ZooKeeperEnsemble(Path directory) {
        this.directory = directory;
        this.shutdownHook = ProcessSupport.addShutdownHook("zookeeper-cleanup", this::close);
    }

    /** @return a standalone server, answering */
    public static ZooKeeperEnsemble standalone() {
        return start(1);
    }

    /**
     * A standalone server that starts from a snapshot of a data tree the test fills: for states a
     * client cannot bring about in a test's time, such as a node whose children counter
     * ({@code cversion}, the next sequence number) is near its limit.
     * @param seed fills the tree (with {@link DataTree#createNode} and the like), and sets its
     * {@link DataTree#lastProcessedZxid} to the last zxid it used
     * @return the server, answering
     */
    public static ZooKeeperEnsemble standaloneStartingFrom(Consumer<DataTree> seed) {
        return start(1, false, seed);
    }

    /** @return a three-member ensemble with a leader */
    public static ZooKeeperEnsemble threeMembers() {
        return start(3, false);
    }

    /** @return a three-member ensemble with a leader, whose members reach each other's quorum ports through proxies */
    public static ZooKeeperEnsemble threeMembersWithCuttableQuorumLinks() {
        return start(3, true);
    }

    private static ZooKeeperEnsemble start(int size) {
        return start(size, false);
    }

    private static ZooKeeperEnsemble start(int size, boolean cuttableLinks) {
        return start(size, cuttableLinks, null);
    }

    private static ZooKeeperEnsemble start(int size, boolean cuttableLinks, @Nullable Consumer<DataTree> seed) {
        Path directory;
        try {
            directory = Files.createTempDirectory("distlock-zookeeper-");
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not create a directory for ZooKeeper", ex);
        }
        ZooKeeperEnsemble ensemble = new ZooKeeperEnsemble(directory);
        try {
            // Distinct ports: a member whose client, quorum and election ports coincide exits with "Invalid config".
            int[] ports = ProcessSupport.freeLoopbackPorts(3 * size);
            for (int id = 1; id <= size; id++) {
                int first = 3 * (id - 1);
                ensemble.members.add(ensemble.new Member(id, ports[first], ports[first + 1], ports[first + 2]));
            }
            if (cuttableLinks) {
                Set<Integer> memberPorts = Arrays.stream(ports).boxed().collect(Collectors.toSet());
                for (Member from : ensemble.members) {
                    for (Member to : ensemble.members) {
                        if (from != to) {
                            ensemble.quorumLinks.put(from.id + "->" + to.id,
                                    proxyOffPorts("tcp://127.0.0.1:" + to.quorumPort, memberPorts));
                        }
                    }
                }
            }
            for (Member member : ensemble.members) {
                member.writeConfiguration();
                if (seed != null) {
                    member.writeSnapshot(seed);
                }
                member.launch();
            }
            ensemble.awaitServing();
            return ensemble;
        }
        catch (RuntimeException ex) {
            ensemble.close();
            throw ex;
        }
    }

    /** A proxy on a port none of {@code taken} (free when chosen, not bound yet, so the system may hand them out). */
    private static TcpProxy proxyOffPorts(String target, Set<Integer> taken) {
        while (true) {
            TcpProxy proxy = TcpProxy.start(target);
            if (!taken.contains(proxy.port())) {
                return proxy;
            }
            proxy.close();
        }
    }

    /** Waits until every running member serves (standalone, leader or follower). */
    public void awaitServing() {
        for (Member member : this.members) {
            if (member.isRunning()
                    && !ProcessSupport.poll(START_TIMEOUT, () -> !member.isRunning() || member.mode() != null)
                    || !member.isRunning()) {
                throw new IllegalStateException(member + " did not serve within " + START_TIMEOUT + "; its output:\n"
                        + member.process().stderrTail());
            }
        }
    }

    /** @return the connect string of every member, for Curator: {@code 127.0.0.1:p1,127.0.0.1:p2,...} */
    public String connectString() {
        return this.members.stream().map(Member::address).collect(Collectors.joining(","));
    }

    /** @param index the member, from 0 @return the member */
    public Member member(int index) {
        return this.members.get(index);
    }

    /** @return how many members there are */
    public int size() {
        return this.members.size();
    }

    /** @return the index of the member that says it leads (or is standalone), or -1 if none does */
    public int leaderIndex() {
        for (int i = 0; i < this.members.size(); i++) {
            String mode = this.members.get(i).mode();
            if ("leader".equals(mode) || "standalone".equals(mode)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Stops the traffic from member {@code fromIndex} to member {@code toIndex}'s quorum port and
     * back (the connection a follower opens to its leader), both directions, until {@link #restoreQuorumLinks()}.
     * @throws IllegalStateException if the ensemble was not started with cuttable links
     */
    public void cutQuorumLink(int fromIndex, int toIndex) {
        quorumLink(fromIndex, toIndex).stall();
    }

    /** Lets every cut quorum link forward again. */
    public void restoreQuorumLinks() {
        this.quorumLinks.values().forEach(TcpProxy::restore);
    }

    private TcpProxy quorumLink(int fromIndex, int toIndex) {
        TcpProxy link = this.quorumLinks.get(member(fromIndex).id + "->" + member(toIndex).id);
        if (link == null) {
            throw new IllegalStateException("No quorum link from " + member(fromIndex) + " to " + member(toIndex)
                    + ": start the ensemble with threeMembersWithCuttableQuorumLinks()");
        }
        return link;
    }

    /** Kills every member and deletes the directories. Idempotent. */
    @Override
    public synchronized void close() {
        for (Member member : this.members) {
            member.kill();
        }
        this.quorumLinks.values().forEach(TcpProxy::close);
        ProcessSupport.deleteRecursively(this.directory);
        ProcessSupport.removeShutdownHook(this.shutdownHook);
    }

    @Override
    public String toString() {
        return "ZooKeeper " + connectString();
    }

    /** One server of the ensemble. */
    public final class Member {

        private final int id;

        private final int clientPort;

        private final int quorumPort;

        private final int electionPort;

        private @Nullable JvmProcess process;

        Member(int id, int clientPort, int quorumPort, int electionPort) {
            this.id = id;
            this.clientPort = clientPort;
            this.quorumPort = quorumPort;
            this.electionPort = electionPort;
        }

        private Path home() {
            return ZooKeeperEnsemble.this.directory.resolve("member-" + this.id);
        }

        void writeConfiguration() {
            List<String> lines = new ArrayList<>(List.of("tickTime=" + TICK.toMillis(), "initLimit=20",
                    "syncLimit=10", "dataDir=" + home().resolve("data"), "clientPort=" + this.clientPort,
                    "clientPortAddress=127.0.0.1", "admin.enableServer=false", "4lw.commands.whitelist=srvr,ruok,dump",
                    "maxClientCnxns=0", "autopurge.purgeInterval=0"));
            if (ZooKeeperEnsemble.this.members.size() > 1) {
                for (Member member : ZooKeeperEnsemble.this.members) {
                    TcpProxy link = ZooKeeperEnsemble.this.quorumLinks.get(this.id + "->" + member.id);
                    int quorumPort = (link != null) ? link.port() : member.quorumPort;
                    lines.add("server." + member.id + "=127.0.0.1:" + quorumPort + ":" + member.electionPort);
                }
            }
            try {
                Files.createDirectories(home().resolve("data"));
                Files.writeString(home().resolve("data").resolve("myid"), Integer.toString(this.id));
                Files.write(home().resolve("zoo.cfg"), lines);
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not write the configuration of " + this, ex);
            }
        }

        /** Writes the snapshot the member starts from: the tree {@code seed} fills. */
        void writeSnapshot(Consumer<DataTree> seed) {
            DataTree tree = new DataTree();
            seed.accept(tree);
            File data = home().resolve("data").toFile();
            try {
                FileTxnSnapLog snapshots = new FileTxnSnapLog(data, data);
                snapshots.save(tree, new ConcurrentHashMap<>(), true);
                snapshots.close();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not write the snapshot of " + this, ex);
            }
        }

        synchronized void launch() {
            this.process = JvmProcess.builder(QuorumPeerMain.class)
                .jvmArgs("-Dzookeeper.jmx.log4j.disable=true", "-Dlogback.configurationFile=" + logConfiguration())
                .args(home().resolve("zoo.cfg").toString())
                .start();
        }

        /** Logs of the server go to its directory, not to the test output. */
        private String logConfiguration() {
            Path config = home().resolve("logback.xml");
            try {
                Files.writeString(config, """
                        <configuration>
                          <appender name="FILE" class="ch.qos.logback.core.FileAppender">
                            <file>%s</file>
                            <encoder><pattern>%%d{HH:mm:ss.SSS} %%-5level [%%thread] %%logger{36} - %%msg%%n</pattern></encoder>
                          </appender>
                          <root level="INFO"><appender-ref ref="FILE"/></root>
                        </configuration>
                        """.formatted(home().resolve("zookeeper.log")));
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not write " + config, ex);
            }
            return config.toString();
        }

        private JvmProcess process() {
            JvmProcess running = this.process;
            if (running == null) {
                throw new IllegalStateException(this + " was never started");
            }
            return running;
        }

        /** @return {@code 127.0.0.1:<client port>} */
        public String address() {
            return "127.0.0.1:" + this.clientPort;
        }

        /** @return whether the member's JVM runs (it may be paused) */
        public synchronized boolean isRunning() {
            return this.process != null && this.process.isAlive();
        }

        /**
         * Asks the server for its mode with the {@code srvr} command.
         * @return {@code standalone}, {@code leader} or {@code follower}, or {@code null} if it does
         * not serve (not running, paused, or without a quorum)
         */
        public @Nullable String mode() {
            String answer = command("srvr");
            if (answer == null) {
                return null;
            }
            for (String line : answer.split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return line.substring("Mode: ".length()).trim();
                }
            }
            return null;
        }

        /**
         * Sends a four-letter command ({@code srvr}, {@code ruok} or {@code dump}, the ones the
         * members allow) to the member's client port.
         * @return the whole answer, or {@code null} if the member did not answer within the command
         * timeout (not running, paused)
         */
        public @Nullable String command(String word) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", this.clientPort), (int) COMMAND_TIMEOUT.toMillis());
                socket.setSoTimeout((int) COMMAND_TIMEOUT.toMillis());
                OutputStream out = socket.getOutputStream();
                out.write(word.getBytes(StandardCharsets.US_ASCII));
                out.flush();
                BufferedReader reader = new BufferedReader(
                        new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
                StringBuilder answer = new StringBuilder();
                String line;
                while ((line = reader.readLine()) != null) {
                    answer.append(line).append('\n');
                }
                return answer.toString();
            }
            catch (IOException ex) {
                return null;
            }
        }

        /** Crashes the member (SIGKILL); its data stays for {@link #restart()}. */
        public synchronized void kill() {
            if (this.process != null) {
                this.process.close();
            }
        }

        /** Freezes the member (SIGSTOP): connections stay open and nothing answers. */
        public synchronized void pause() {
            process().pause();
        }

        /** Continues a paused member (SIGCONT). */
        public synchronized void resume() {
            if (this.process != null) {
                this.process.resume();
            }
        }

        /** Starts the member again on the same ports and data, after a {@link #kill()}, and waits until it serves. */
        public void restart() {
            kill();
            launch();
            if (!ProcessSupport.poll(START_TIMEOUT, () -> mode() != null)) {
                throw new IllegalStateException(this + " did not serve again within " + START_TIMEOUT);
            }
        }

        @Override
        public String toString() {
            return "ZooKeeper member " + this.id + " at " + address();
        }
    }
}
