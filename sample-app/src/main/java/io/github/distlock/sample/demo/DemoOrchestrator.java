package io.github.distlock.sample.demo;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.autoconfigure.DistributedLockProperties.Jdbc;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.autoconfigure.DistributedLockProperties.Zookeeper;
import io.github.distlock.sample.SampleApplication;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Profile;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * The fairness experiment ({@code --spring.profiles.active=demo}): starts {@code demo.processes}
 * JVMs of this application as {@link DemoProcess}es, each with {@code demo.workers} workers that
 * take one lock key and hold it for {@code demo.hold}. The workers' lines are echoed as they
 * arrive and each run ends with a {@link DemoSummary} computed from them.
 * <ul>
 * <li>{@code fair=true}: the processes start contending {@code demo.process-stagger} apart; every
 * worker waits for the lock, so they are served in arrival order.</li>
 * <li>{@code fair=false}: process 1 starts alone, its workers wait for the lock, and after them a
 * newcomer of process 1 calls {@code tryLock()} until it succeeds: it takes the lock the moment
 * it is free, ahead of its process's waiting workers (barging at the process's local gate). The
 * other processes start, {@code demo.process-stagger} apart, once the newcomer holds the lock;
 * each queues one unfair waiter in the store at a time, so their first workers are served before
 * process 1's remaining worker, which arrived earlier but waited at its local gate.</li>
 * </ul>
 *
 * <p>Exit code: 0 when both runs completed and the fair run kept arrival order; 2 when the fair
 * run broke arrival order or the lock was ever held twice; 1 when the lock store (etcd, or Redis,
 * ZooKeeper or the database with {@code distributed-lock.store=redis}, {@code zookeeper} or
 * {@code jdbc}) was unreachable or a process failed.
 */
@Component
@Profile("demo")
@ConditionalOnProperty(name = "demo.role", havingValue = "orchestrator", matchIfMissing = true)
class DemoOrchestrator implements CommandLineRunner, ExitCodeGenerator {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);

    /** The spring.data.redis properties that name the Redis the workers connect to. */
    private static final List<String> REDIS_CONNECTION = List.of("url", "host", "port", "database", "username",
            "password", "ssl.enabled", "sentinel.master", "sentinel.nodes", "cluster.nodes");

    /**
     * The spring.datasource properties that name the database the workers connect to; the password
     * goes to them in their environment, where other users of the machine cannot read it.
     */
    private static final List<String> DATASOURCE_CONNECTION = List.of("url", "username", "driver-class-name");

    private final DemoProperties demo;

    private final DistributedLockProperties locks;

    private final InspectableLockRegistry registry;

    private final Environment environment;

    private final List<DemoEvent> events = Collections.synchronizedList(new ArrayList<>());

    /** Counted down when the unfair run's newcomer acquires the lock. */
    private volatile CountDownLatch newcomerAcquired = new CountDownLatch(0);

    private volatile int newcomer;

    private volatile int exitCode;

    private volatile boolean stopping;

    DemoOrchestrator(DemoProperties demo, DistributedLockProperties locks, InspectableLockRegistry registry,
            Environment environment) {
        this.demo = demo;
        this.locks = locks;
        this.registry = registry;
        this.environment = environment;
    }

    @Override
    public int getExitCode() {
        return this.exitCode;
    }

    @Override
    public void run(String... args) throws InterruptedException {
        if (!storeReachable()) {
            System.err.println(storeDescription() + " is not reachable: start it or set " + switch (store()) {
                case REDIS -> "--spring.data.redis.host and --spring.data.redis.port (scripts/demo.sh --store redis starts one)";
                case ZOOKEEPER -> "--distributed-lock.zookeeper.connect-string (scripts/demo.sh --store zookeeper starts one)";
                case JDBC -> "--spring.datasource.url, --spring.datasource.username and --spring.datasource.password"
                        + " (scripts/demo.sh --store jdbc starts a PostgreSQL server)";
                default -> "--distributed-lock.etcd.endpoints (scripts/demo.sh starts one for you)";
            });
            this.exitCode = 1;
            return;
        }
        say("%d processes x %d workers contend for one lock through %s; each worker holds it %d ms.",
                this.demo.processes(), this.demo.workers(), storeDescription(), this.demo.hold().toMillis());
        say("Processes start contending %d ms apart, the workers of a process %d ms apart.",
                this.demo.processStagger().toMillis(), this.demo.workerStagger().toMillis());
        List<Child> children = new ArrayList<>();
        Thread cleanup = new Thread(() -> {
            this.stopping = true;
            children.forEach(Child::kill);
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            for (int process = 1; process <= this.demo.processes(); process++) {
                children.add(new Child(process, command(process), storeEnvironment()));
            }
            for (Child child : children) {
                child.await("READY", READY_TIMEOUT);
            }
            for (boolean fair : new boolean[] { true, false }) {
                DemoSummary summary = contend(children, fair);
                if (!summary.isExclusive() || !summary.fencesIncrease() || (fair && !summary.arrivalOrderKept())) {
                    this.exitCode = Math.max(this.exitCode, 2);
                }
            }
        }
        catch (DemoFailedException ex) {
            System.err.println(this.stopping ? "demo stopped" : "demo failed: " + ex.getMessage());
            this.exitCode = 1;
        }
        finally {
            children.forEach(Child::stop);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            }
            catch (IllegalStateException ex) {
                // The JVM is shutting down (SIGTERM, Ctrl-C): the hook runs anyway, and stops what is left.
            }
        }
    }

    private DemoSummary contend(List<Child> children, boolean fair) throws InterruptedException {
        say("");
        say("=== fair=%s ===", fair);
        this.events.clear();
        long holds = (long) this.demo.processes() * this.demo.workers() + (fair ? 0 : 1);
        Duration timeout = this.demo.hold().multipliedBy(2 * holds).plus(this.demo.waitTimeout());
        if (fair) {
            say("Every worker waits for the lock (fair=true), taking its place in the " + storeName()
                    + " queue as it arrives.");
            for (int i = 0; i < children.size(); i++) {
                if (i > 0) {
                    Thread.sleep(this.demo.processStagger().toMillis());
                }
                children.get(i).send("run fair");
            }
        }
        else {
            int newcomer = this.demo.processes() * this.demo.workers() + 1;
            String plan = String.format("Process 1 starts alone: %s wait%s for the lock (fair=false); then worker %d"
                    + " arrives and calls tryLock() until it succeeds, without waiting in line.", workers(1),
                    (this.demo.workers() == 1) ? "s" : "", newcomer);
            if (children.size() > 1) {
                plan += String.format(" Processes 2-%d start %d ms apart once worker %d holds the lock; their workers"
                        + " wait for it (fair=false).", children.size(), this.demo.processStagger().toMillis(),
                        newcomer);
            }
            say("%s", wrap("", plan, 100));
            this.newcomerAcquired = new CountDownLatch(1);
            this.newcomer = newcomer;
            children.get(0).send("run unfair with newcomer");
            if (!this.newcomerAcquired.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new DemoFailedException("worker " + newcomer + " did not get the lock within "
                        + timeout.toSeconds() + " s");
            }
            for (int i = 1; i < children.size(); i++) {
                if (i > 1) {
                    Thread.sleep(this.demo.processStagger().toMillis());
                }
                children.get(i).send("run unfair");
            }
        }
        for (Child child : children) {
            child.await("DONE", timeout);
        }
        DemoSummary summary = DemoSummary.of(List.copyOf(this.events));
        say("--- summary fair=%s ---", fair);
        say("%s", summary.describe(fair));
        if (!fair) {
            say("%s", unfairLegend(summary));
        }
        if (summary.isComplete() && summary.arrivalOrder().size() != holds) {
            throw new DemoFailedException("expected " + holds + " workers, saw " + summary.arrivalOrder().size());
        }
        return summary;
    }

    /** What the unfair run's out-of-order acquisitions mean, for the ones that happened. */
    private String unfairLegend(DemoSummary summary) {
        List<String> bargedAhead = summary.overtakes()
            .stream()
            .filter(overtake -> overtake.worker() == this.newcomer && overtake.sameProcess())
            .map(overtake -> String.valueOf(overtake.overtaken()))
            .toList();
        List<String> sentences = new ArrayList<>();
        if (!bargedAhead.isEmpty()) {
            sentences.add("worker " + this.newcomer + " arrived last in p1 and took the lock the moment it was free,"
                    + " ahead of p1's waiting worker" + ((bargedAhead.size() > 1) ? "s " : " ")
                    + String.join(", ", bargedAhead) + ": an unfair tryLock() barges at its process's local gate.");
        }
        else if (this.demo.workers() == 1) {
            sentences.add("worker " + this.newcomer + " took the lock when worker 1 released it; with one worker per"
                    + " process, no worker of p1 was waiting that it could get ahead of.");
        }
        else {
            sentences.add("worker " + this.newcomer + " did not get ahead of p1's waiting workers this time: the lock"
                    + " was free only for an instant, and a waiting worker took it first.");
        }
        if (summary.overtakes().stream().anyMatch(overtake -> !overtake.sameProcess())) {
            sentences.add("Workers were served before earlier workers of another process: a process's unfair"
                    + " waiters wait at its local gate, and only one of them at a time is queued in " + storeName() + ".");
        }
        return wrap("  what it shows     : ", String.join(" ", sentences), 100);
    }

    /** Words of {@code text} in lines of at most {@code width} characters, the first after {@code label}. */
    static String wrap(String label, String text, int width) {
        StringBuilder lines = new StringBuilder(label);
        int lineStart = 0;
        for (String word : text.split(" ")) {
            boolean first = lines.length() == label.length();
            if (!first && lines.length() - lineStart + 1 + word.length() > width) {
                lines.append(System.lineSeparator());
                lineStart = lines.length();
                lines.append(" ".repeat(label.length()));
                first = true;
            }
            lines.append(first ? "" : " ").append(word);
        }
        return lines.toString();
    }

    private String workers(int process) {
        int first = (process - 1) * this.demo.workers() + 1;
        int last = process * this.demo.workers();
        return (first == last) ? "worker " + first : "workers " + first + "-" + last;
    }

    private boolean storeReachable() {
        try {
            this.registry.connect().get(10, TimeUnit.SECONDS);
            return true;
        }
        catch (Exception ex) {
            return false;
        }
    }

    private Store store() {
        return this.locks.getStore();
    }

    private String storeName() {
        return switch (store()) {
            case REDIS -> "Redis";
            case ZOOKEEPER -> "ZooKeeper";
            case JDBC -> databaseName(datasourceUrl());
            default -> "etcd";
        };
    }

    private String storeDescription() {
        return switch (store()) {
            case REDIS -> "Redis at " + this.environment.getProperty("spring.data.redis.host", "localhost") + ":"
                    + this.environment.getProperty("spring.data.redis.port", "6379");
            case ZOOKEEPER -> "ZooKeeper at " + this.locks.getZookeeper().getConnectString();
            case JDBC -> databaseName(datasourceUrl()) + " at " + withoutSecrets(datasourceUrl());
            default -> "etcd at " + String.join(",", this.locks.getEtcd().getEndpoints());
        };
    }

    private String datasourceUrl() {
        return this.environment.getProperty("spring.datasource.url", "the application's DataSource");
    }

    /** @return the database's name for the demo's sentences, from its JDBC URL ({@code PostgreSQL}) */
    static String databaseName(String url) {
        String[] parts = url.split(":");
        String subprotocol = (parts.length > 1 && parts[0].equals("jdbc")) ? parts[1].toLowerCase(Locale.ROOT) : "";
        return switch (subprotocol) {
            case "postgresql" -> "PostgreSQL";
            case "mariadb" -> "MariaDB";
            case "mysql" -> "MySQL";
            case "h2" -> "H2";
            case "" -> "the database";
            default -> subprotocol;
        };
    }

    /** @return a JDBC URL without parameters and user information, which may hold credentials */
    static String withoutSecrets(String url) {
        String withoutParameters = url.split("[?;]", 2)[0];
        return withoutParameters.replaceFirst("//[^/@]*@", "//");
    }

    /** The lock store settings the worker processes need to share this process's locks. */
    List<String> storeArguments() {
        if (store() == Store.JDBC) {
            Jdbc jdbc = this.locks.getJdbc();
            List<String> arguments = new ArrayList<>(List.of("--distributed-lock.store=jdbc",
                    "--distributed-lock.jdbc.table-prefix=" + jdbc.getTablePrefix(),
                    "--distributed-lock.jdbc.lease-ttl=" + jdbc.getLeaseTtl().toMillis() + "ms",
                    "--distributed-lock.jdbc.request-timeout=" + jdbc.getRequestTimeout().toMillis() + "ms",
                    "--distributed-lock.jdbc.initialize-schema=" + jdbc.getInitializeSchema().name().toLowerCase(Locale.ROOT)));
            if (jdbc.getPollInterval() != null) {
                arguments.add("--distributed-lock.jdbc.poll-interval=" + jdbc.getPollInterval().toMillis() + "ms");
            }
            for (String property : DATASOURCE_CONNECTION) {
                String value = this.environment.getProperty("spring.datasource." + property);
                if (value != null) {
                    arguments.add("--spring.datasource." + property + "=" + value);
                }
            }
            return arguments;
        }
        if (store() == Store.ZOOKEEPER) {
            Zookeeper zookeeper = this.locks.getZookeeper();
            List<String> arguments = new ArrayList<>(List.of("--distributed-lock.store=zookeeper",
                    "--distributed-lock.zookeeper.connect-string=" + zookeeper.getConnectString(),
                    "--distributed-lock.zookeeper.namespace=" + zookeeper.getNamespace(),
                    "--distributed-lock.zookeeper.session-timeout=" + zookeeper.getSessionTimeout().toMillis() + "ms"));
            // With credentials, the lock znodes are readable only by their user: the workers need the same.
            if (zookeeper.getUsername() != null && zookeeper.getPassword() != null) {
                arguments.add("--distributed-lock.zookeeper.username=" + zookeeper.getUsername());
                arguments.add("--distributed-lock.zookeeper.password=" + zookeeper.getPassword());
            }
            return arguments;
        }
        if (store() != Store.REDIS) {
            return List.of("--distributed-lock.etcd.endpoints=" + String.join(",", this.locks.getEtcd().getEndpoints()),
                    "--distributed-lock.etcd.namespace=" + this.locks.getEtcd().getNamespace());
        }
        List<String> arguments = new ArrayList<>(List.of("--distributed-lock.store=redis",
                "--distributed-lock.redis.namespace=" + this.locks.getRedis().getNamespace()));
        for (String property : REDIS_CONNECTION) {
            String value = this.environment.getProperty("spring.data.redis." + property);
            if (value != null) {
                arguments.add("--spring.data.redis." + property + "=" + value);
            }
        }
        return arguments;
    }

    /** Settings the worker processes get in their environment rather than on their command line. */
    Map<String, String> storeEnvironment() {
        String password = this.environment.getProperty("spring.datasource.password");
        return (store() == Store.JDBC && password != null) ? Map.of("SPRING_DATASOURCE_PASSWORD", password) : Map.of();
    }

    /** This application again, as a worker process, started the way this JVM was (jar or class path). */
    private List<String> command(int process) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData"));
        String classPath = System.getProperty("java.class.path");
        if (classPath.endsWith(".jar") && !classPath.contains(File.pathSeparator)) {
            command.addAll(List.of("-jar", classPath));
        }
        else {
            command.addAll(List.of("-cp", classPath, SampleApplication.class.getName()));
        }
        command.addAll(List.of("--spring.profiles.active=demo", "--demo.role=worker", "--demo.process=" + process,
                "--demo.processes=" + this.demo.processes(), "--demo.workers=" + this.demo.workers(), "--demo.hold=" + this.demo.hold().toMillis() + "ms",
                "--demo.worker-stagger=" + this.demo.workerStagger().toMillis() + "ms",
                "--demo.wait-timeout=" + this.demo.waitTimeout().toMillis() + "ms",
                "--spring.application.name=demo-p" + process));
        command.addAll(storeArguments());
        return command;
    }

    private static void say(String format, Object... args) {
        System.out.println(String.format(format, args));
    }

    private void onLine(Child child, String line) {
        Optional<DemoEvent> event = DemoEvent.parse(line);
        if (event.isPresent()) {
            this.events.add(event.get());
            System.out.println(line);
            if (event.get().kind() == DemoEvent.Kind.ACQUIRED && event.get().worker() == this.newcomer) {
                this.newcomerAcquired.countDown();
            }
        }
        else if (line.startsWith("FAILED")) {
            System.out.println("p" + child.process + " " + line);
            this.exitCode = 1;
        }
        else if (!line.equals("READY") && !line.equals("DONE") && !line.isBlank()) {
            System.out.println("  [p" + child.process + "] " + line);
        }
    }

    /** A worker process: its standard input takes commands, its output lines are parsed and echoed. */
    private final class Child {

        private final int process;

        private final Process handle;

        private final Writer stdin;

        private final BlockingQueue<String> control = new LinkedBlockingQueue<>();

        Child(int process, List<String> command, Map<String, String> environment) {
            this.process = process;
            try {
                ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
                builder.environment().putAll(environment);
                this.handle = builder.start();
            }
            catch (IOException ex) {
                throw new DemoFailedException("could not start worker process " + process + ": " + ex.getMessage());
            }
            this.stdin = new OutputStreamWriter(this.handle.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(this::read, "demo-p" + process + "-output");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader output = new BufferedReader(
                    new InputStreamReader(this.handle.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = output.readLine()) != null) {
                    onLine(this, line);
                    if (line.equals("READY") || line.equals("DONE")) {
                        this.control.add(line);
                    }
                }
            }
            catch (IOException ex) {
                // The process is gone; reported below like the end of its output.
            }
            this.control.add("EXITED");
        }

        void send(String command) {
            try {
                this.stdin.write(command + System.lineSeparator());
                this.stdin.flush();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("could not talk to worker process " + this.process, ex);
            }
        }

        void await(String expected, Duration timeout) throws InterruptedException {
            String line = this.control.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (line == null) {
                throw new DemoFailedException("worker process " + this.process + " did not print " + expected
                        + " within " + timeout.toSeconds() + " s");
            }
            if (!line.equals(expected)) {
                throw new DemoFailedException("worker process " + this.process + " exited before printing " + expected
                        + (this.handle.isAlive() ? "" : " (exit code " + this.handle.exitValue() + ")"));
            }
        }

        /** Asks the process to exit, then kills it if it does not. */
        void stop() {
            try {
                send("exit");
                this.stdin.close();
            }
            catch (IOException | UncheckedIOException ex) {
                // Already gone.
            }
            try {
                if (!this.handle.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    kill();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                kill();
            }
        }

        void kill() {
            this.handle.destroyForcibly();
        }
    }

    private static final class DemoFailedException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        DemoFailedException(String message) {
            super(message);
        }
    }
}
