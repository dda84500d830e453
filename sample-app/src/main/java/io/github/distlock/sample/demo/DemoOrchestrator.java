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
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.sample.SampleApplication;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.ExitCodeGenerator;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The fairness experiment ({@code --spring.profiles.active=demo}): starts {@code demo.processes}
 * JVMs of this application as {@link DemoProcess}es, each with {@code demo.workers} workers that
 * take one lock key and hold it for {@code demo.hold}. The processes start contending
 * {@code demo.process-stagger} apart, once with {@code fair=true} and once with
 * {@code fair=false}. The workers' lines are echoed as they arrive and each run ends with a
 * {@link DemoSummary} computed from them.
 *
 * <p>Exit code: 0 when both runs completed and the fair run kept arrival order; 2 when the fair
 * run broke arrival order or the lock was ever held twice; 1 when etcd was unreachable or a
 * process failed.
 */
@Component
@Profile("demo")
@ConditionalOnProperty(name = "demo.role", havingValue = "orchestrator", matchIfMissing = true)
class DemoOrchestrator implements CommandLineRunner, ExitCodeGenerator {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);

    private final DemoProperties demo;

    private final DistributedLockProperties locks;

    private final Client client;

    private final List<DemoEvent> events = Collections.synchronizedList(new ArrayList<>());

    private volatile int exitCode;

    private volatile boolean stopping;

    DemoOrchestrator(DemoProperties demo, DistributedLockProperties locks, Client client) {
        this.demo = demo;
        this.locks = locks;
        this.client = client;
    }

    @Override
    public int getExitCode() {
        return this.exitCode;
    }

    @Override
    public void run(String... args) throws InterruptedException {
        List<String> endpoints = this.locks.getEtcd().getEndpoints();
        if (!etcdReachable()) {
            System.err.println("etcd at " + endpoints + " is not reachable: start etcd or set "
                    + "--distributed-lock.etcd.endpoints (scripts/demo.sh starts one for you)");
            this.exitCode = 1;
            return;
        }
        say("%d processes x %d workers contend for one lock through etcd at %s; each worker holds it %d ms.",
                this.demo.processes(), this.demo.workers(), String.join(",", endpoints), this.demo.hold().toMillis());
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
                children.add(new Child(process, command(process)));
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
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
    }

    private DemoSummary contend(List<Child> children, boolean fair) throws InterruptedException {
        say("");
        say("=== fair=%s ===", fair);
        this.events.clear();
        for (int i = 0; i < children.size(); i++) {
            if (i > 0) {
                Thread.sleep(this.demo.processStagger().toMillis());
            }
            children.get(i).send(fair ? "run fair" : "run unfair");
        }
        long holds = (long) this.demo.processes() * this.demo.workers();
        Duration timeout = this.demo.hold().multipliedBy(2 * holds).plus(this.demo.waitTimeout());
        for (Child child : children) {
            child.await("DONE", timeout);
        }
        DemoSummary summary = DemoSummary.of(List.copyOf(this.events));
        say("--- summary fair=%s ---", fair);
        say("%s", summary.describe(fair));
        if (summary.isComplete() && summary.arrivalOrder().size() != holds) {
            throw new DemoFailedException("expected " + holds + " workers, saw " + summary.arrivalOrder().size());
        }
        return summary;
    }

    private boolean etcdReachable() {
        try {
            this.client.getKVClient().get(ByteSequence.from("/", StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
            return true;
        }
        catch (Exception ex) {
            return false;
        }
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
                "--demo.workers=" + this.demo.workers(), "--demo.hold=" + this.demo.hold().toMillis() + "ms",
                "--demo.worker-stagger=" + this.demo.workerStagger().toMillis() + "ms",
                "--demo.wait-timeout=" + this.demo.waitTimeout().toMillis() + "ms",
                "--distributed-lock.etcd.endpoints=" + String.join(",", this.locks.getEtcd().getEndpoints()),
                "--distributed-lock.etcd.namespace=" + this.locks.getEtcd().getNamespace(),
                "--spring.application.name=demo-p" + process));
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

        Child(int process, List<String> command) {
            this.process = process;
            try {
                this.handle = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
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
