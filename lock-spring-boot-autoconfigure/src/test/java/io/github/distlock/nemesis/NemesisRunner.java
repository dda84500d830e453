package io.github.distlock.nemesis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultHeal;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.HistoryEvent.FaultStart;
import io.github.distlock.nemesis.HistoryEvent.RunStart;
import io.github.distlock.nemesis.HistoryEvent.StoreObservation;
import io.github.distlock.nemesis.HistoryEvent.WorkerKilled;
import io.github.distlock.nemesis.NemesisStore.Observation;
import io.github.distlock.nemesis.NemesisStore.StoreFault;
import io.github.distlock.nemesis.NemesisStore.Type;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.TcpProxy;

/**
 * A nemesis run against one store ({@link NemesisStore}): its servers, the {@link FencedRegister},
 * worker JVMs ({@link NemesisWorker}, half of them with local passes and linger, each slot behind
 * a {@link TcpProxy} per store server where the store has addresses to proxy) and the faults of a
 * {@link FaultPlan} drawn from the seed; then the {@link Checker} on the history of every process.
 *
 * <p>Timeline: the workers contend for {@code --duration}; faults start and heal in its first
 * part, and the rest is calm (at least TTL + election + {@link #CALM_MARGIN} after the last heal
 * actually completed, so that every key can show it recovered). Then the workers are told to
 * stop and exit, a TTL passes (the sessions of killed workers end), and the runner records what the
 * store still holds. Every process it started (store servers, workers) is killed by its PID
 * when the run ends, fails, or the JVM shuts down.
 *
 * <p>{@code main} prints the seed first, the plan, then the report's table, and exits with the
 * report's status (1 on any violation, also when a worker hit an unexpected exception or hung),
 * 2 for bad arguments, 3 when the run itself failed.
 */
public final class NemesisRunner {

    /** The process name of the runner's events. */
    public static final String RUNNER = "runner";

    /** The lock keys: one hot, three cold. */
    static final List<String> KEYS = List.of("hot", "cold-1", "cold-2", "cold-3");

    /** How long a replacement worker may take to get ready: the store may be down or restarting meanwhile. */
    private static final Duration WORKER_START = Duration.ofMinutes(3);

    /** Quiet time on top of TTL + election after the last heal, for scheduling on a loaded machine. */
    static final Duration CALM_MARGIN = Duration.ofSeconds(2);

    private final Options options;

    private final HistoryWriter history;

    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());

    private final Map<FaultKind, AtomicInteger> injected = Collections.synchronizedMap(new EnumMap<>(FaultKind.class));

    private final AtomicInteger kills = new AtomicInteger();

    private final AtomicInteger faultIds = new AtomicInteger();

    private final AtomicInteger workerIds = new AtomicInteger();

    private final List<Worker> allWorkers = Collections.synchronizedList(new ArrayList<>());

    private Worker[] slots;

    /** Per worker slot, a proxy in front of each of the store's addresses; empty lists if it has none. */
    private List<List<TcpProxy>> proxies;

    private NemesisStore store;

    private FencedRegister register;

    private NemesisRunner(Options options, HistoryWriter history) {
        this.options = options;
        this.history = history;
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        }
        catch (IllegalArgumentException ex) {
            System.err.println("nemesis: " + ex.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        int status;
        try {
            Result result = run(options);
            status = result.exitStatus();
        }
        catch (Exception ex) {
            System.err.println("nemesis: the run failed (seed " + options.seed() + "): " + ex);
            ex.printStackTrace();
            status = 3;
        }
        System.out.flush();
        System.exit(status);
    }

    /**
     * Runs one nemesis run and checks its history, printing the seed, the plan and the table.
     * @return the checked run
     */
    public static Result run(Options options) throws IOException, InterruptedException {
        Files.createDirectories(options.historyDir());
        System.out.println("nemesis: seed " + options.seed() + ", store " + options.store().label() + ", duration "
                + options.duration().toSeconds() + "s, " + options.workers() + " workers x " + options.threads()
                + " threads, lease TTL " + options.ttl().toMillis() + " ms, history in " + options.historyDir());
        NemesisRunner runner;
        Bounds bounds;
        try (HistoryWriter history = HistoryWriter.open(options.historyDir().resolve(RUNNER + ".history"))) {
            history.record(new RunStart(System.nanoTime(), RUNNER, options.seed(), options.store().label(),
                    System.currentTimeMillis()));
            runner = new NemesisRunner(options, history);
            bounds = runner.execute();
        }
        Report report = Report.of(History.of(HistoryReader.readDirectory(options.historyDir())), new Checker(bounds));
        Map<String, Integer> injected = new LinkedHashMap<>();
        runner.injected.forEach((kind, count) -> injected.put(History.label(kind), count.get()));
        injected.put(History.KILL_WORKER, runner.kills.get());
        Result result = new Result(report, options.historyDir(), Map.copyOf(injected), List.copyOf(runner.problems));
        System.out.println(report.table());
        result.problems().forEach((problem) -> System.out.println("problem: " + problem));
        System.out.println("nemesis: seed " + options.seed() + ", history in " + options.historyDir() + ", "
                + ((result.exitStatus() == 0) ? "PASS" : "FAIL"));
        return result;
    }

    /** @return the bounds of the store that ran */
    private Bounds execute() throws IOException, InterruptedException {
        ScheduledExecutorService healer = Executors.newScheduledThreadPool(8, (task) -> {
            Thread thread = new Thread(task, "nemesis-heal");
            thread.setDaemon(true);
            return thread;
        });
        try {
            this.store = this.options.store().start();
            this.register = FencedRegister.start();
            this.slots = new Worker[this.options.workers()];
            this.proxies = new ArrayList<>();
            for (int slot = 0; slot < this.slots.length; slot++) {
                List<TcpProxy> slotProxies = new ArrayList<>();
                this.proxies.add(slotProxies);
                for (String address : this.store.addresses()) {
                    slotProxies.add(TcpProxy.start("tcp://" + address));
                }
            }
            for (int slot = 0; slot < this.slots.length; slot++) {
                this.slots[slot] = startWorker(slot);
            }
            // Recording starts once every worker is warmed up: JVMs warming up beside it slow the store down.
            for (Worker worker : this.slots) {
                worker.process().awaitLine((line) -> line.startsWith(NemesisWorker.READY), Duration.ofSeconds(90));
            }
            for (Worker worker : this.slots) {
                worker.process().sendLine(NemesisWorker.GO);
            }
            Duration calm = this.options.calm();
            Map<Action, Integer> weights = new EnumMap<>(Action.class);
            weights.putAll(this.store.weights());
            if (this.store.addresses().isEmpty()) {
                weights.remove(Action.NETWORK_WORKER);
            }
            FaultPlan plan = FaultPlan.generate(this.options.seed(), this.options.duration().minus(calm),
                    this.options.workers(), this.store.members(), this.options.ttl(), weights);
            System.out.println("nemesis: " + plan.faults().size() + " faults planned:" + System.lineSeparator() + plan);
            long start = System.nanoTime();
            List<ScheduledFuture<?>> heals = new ArrayList<>();
            ScheduledFuture<?> memberHeal = null;
            ScheduledFuture<?>[] slotHeals = new ScheduledFuture<?>[this.slots.length];
            for (Fault fault : plan.faults()) {
                sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(fault.startMillis()));
                boolean memberFault = fault.action().onStoreMember();
                boolean workerFault = fault.action().onWorker();
                // The plan keeps one fault per member and per worker slot, but a fault may start or heal late (a
                // restart takes longer than planned): wait for the earlier one's heal. A kill of a paused worker
                // would also end its pause before the heal that the history expects.
                if (memberFault && memberHeal != null) {
                    await(memberHeal);
                }
                if (workerFault && slotHeals[fault.target()] != null) {
                    await(slotHeals[fault.target()]);
                }
                ScheduledFuture<?> heal = inject(fault, healer);
                if (heal != null) {
                    heals.add(heal);
                    if (memberFault) {
                        memberHeal = heal;
                    }
                    if (workerFault) {
                        slotHeals[fault.target()] = heal;
                    }
                }
            }
            for (ScheduledFuture<?> heal : heals) {
                await(heal);
            }
            // A backward clock step keeps sessions renewed before it alive for its size beyond a TTL: the calm end
            // must be long enough for the checker's recovery bound, which it lengthens by as much.
            Duration stretch = plan.faults().stream().map(this.store::stretch).max(Duration::compareTo)
                .orElse(Duration.ZERO);
            long calmEnd = Math.max(System.nanoTime() + calm.plus(stretch).toNanos(),
                    start + this.options.duration().toNanos());
            System.out.println("nemesis: every fault healed; calm until the end");
            sleepUntil(calmEnd);
            stopWorkers();
            // The sessions of killed workers end one TTL after their last renewal (and a clock step's stretch).
            Thread.sleep(this.options.ttl().plus(stretch).plusSeconds(1).toMillis());
            Observation left = this.store.observe();
            this.history.record(new StoreObservation(System.nanoTime(), RUNNER, left.entries(), left.sessions(),
                    left.detail()));
            return this.store.bounds(this.options.ttl());
        }
        finally {
            healer.shutdownNow();
            for (Worker worker : this.allWorkers) {
                worker.process().close();
            }
            if (this.proxies != null) {
                this.proxies.forEach((slotProxies) -> slotProxies.forEach(TcpProxy::close));
            }
            if (this.register != null) {
                this.register.close();
            }
            if (this.store != null) {
                this.store.close();
            }
        }
    }

    private Worker startWorker(int slot) {
        String id = "w" + this.workerIds.incrementAndGet();
        boolean handoff = slot % 2 == 0;
        List<String> addresses = this.store.addresses().isEmpty() ? List.of()
                : this.proxies.get(slot).stream().map((proxy) -> "127.0.0.1:" + proxy.port()).toList();
        NemesisWorker.Settings settings = new NemesisWorker.Settings(this.store.spec(addresses),
                this.store.namespace(), this.options.ttl(), id, this.options.historyDir(), KEYS,
                this.options.threads(), this.options.seed(), handoff, this.register.address());
        JvmProcess process = JvmProcess.builder(NemesisWorker.class).args(settings.toArgs()).start();
        Worker worker = new Worker(id, process);
        this.allWorkers.add(worker);
        return worker;
    }

    /** Starts {@code fault} and schedules its heal; returns the heal, or null for a fault without one. */
    private ScheduledFuture<?> inject(Fault fault, ScheduledExecutorService healer) {
        String id = "f" + this.faultIds.incrementAndGet();
        long heal = fault.durationMillis();
        switch (fault.action()) {
            case KILL_WORKER -> {
                Worker worker = this.slots[fault.target()];
                worker.process().kill();
                this.history.record(new WorkerKilled(System.nanoTime(), RUNNER, worker.id()));
                this.kills.incrementAndGet();
                Worker replacement = startWorker(fault.target());
                this.slots[fault.target()] = replacement;
                // Read once it is warmed up.
                replacement.process().sendLine(NemesisWorker.GO);
                System.out.println("nemesis: killed " + worker.id() + ", replaced by " + replacement.id());
                // The slot's next fault waits until the replacement is ready: a fault on a worker still starting
                // (creating its tables, say) only kept it from starting, and it exited or missed its STOP.
                return healer.schedule(() -> {
                    try {
                        replacement.process().awaitLine((line) -> line.startsWith(NemesisWorker.READY), WORKER_START);
                    }
                    catch (AssertionError ex) {
                        this.problems.add(replacement.id() + " did not get ready within " + WORKER_START.toSeconds()
                                + " s: " + ex.getMessage());
                    }
                }, 0, TimeUnit.MILLISECONDS);
            }
            case PAUSE_WORKER -> {
                Worker worker = this.slots[fault.target()];
                start(id, FaultKind.PAUSE_WORKER, worker.id(), false);
                try {
                    worker.process().pause();
                }
                catch (RuntimeException ex) {
                    // A worker that exited on its own says why on stderr.
                    this.problems.add("could not pause " + worker.id() + ": " + ex + " (stderr tail: "
                            + worker.process().stderrTail().strip() + ")");
                    heal = 0;
                }
                return healer.schedule(() -> {
                    worker.process().resume();
                    heal(id);
                }, heal, TimeUnit.MILLISECONDS);
            }
            case NETWORK_WORKER -> {
                Worker worker = this.slots[fault.target()];
                List<TcpProxy> slotProxies = this.proxies.get(fault.target());
                List<FaultKind> kinds = FaultKind.NETWORK;
                FaultKind kind = kinds.get(fault.variant() % kinds.size());
                // 50 to 650 ms each way: slow, but most calls still get through.
                Duration latency = Duration.ofMillis(50 + fault.variant() / kinds.size() * 3);
                start(id, kind, worker.id(), false);
                for (TcpProxy proxy : slotProxies) {
                    switch (kind) {
                        case BLACK_HOLE -> proxy.stall();
                        case RESET -> proxy.reset();
                        case DELAY -> proxy.delay(latency);
                        case ONE_WAY -> proxy.stallAnswers();
                        default -> proxy.severOpenConnections();
                    }
                }
                return healer.schedule(() -> {
                    for (TcpProxy proxy : slotProxies) {
                        proxy.delay(Duration.ZERO);
                        proxy.restore();
                        // The network works again: a packet of a connection it forgot gets a reset. Otherwise the
                        // fault would outlast its heal until the client's keep-alive gives up on the connection.
                        proxy.resetSevered();
                    }
                    heal(id);
                }, heal, TimeUnit.MILLISECONDS);
            }
            default -> {
                StoreFault storeFault = this.store.fault(fault);
                start(id, storeFault.kind(), storeFault.target(), storeFault.dataLoss());
                try {
                    storeFault.start().run();
                }
                catch (RuntimeException ex) {
                    this.problems.add("could not start " + id + " (" + History.label(storeFault.kind()) + " of "
                            + storeFault.target() + "): " + ex);
                }
                return healer.schedule(() -> {
                    try {
                        storeFault.heal().run();
                    }
                    catch (RuntimeException ex) {
                        this.problems.add("could not heal " + id + " (" + History.label(storeFault.kind()) + " of "
                                + storeFault.target() + "): " + ex);
                    }
                    heal(id);
                }, heal, TimeUnit.MILLISECONDS);
            }
        }
    }

    private void start(String id, FaultKind kind, String target, boolean dataLoss) {
        this.history.record(new FaultStart(System.nanoTime(), RUNNER, id, kind, target, dataLoss));
        this.injected.computeIfAbsent(kind, (k) -> new AtomicInteger()).incrementAndGet();
        System.out.println("nemesis: " + id + " " + History.label(kind) + " of " + target);
    }

    private void heal(String id) {
        this.history.record(new FaultHeal(System.nanoTime(), RUNNER, id));
        System.out.println("nemesis: " + id + " healed");
    }

    private void stopWorkers() {
        List<Worker> live = new ArrayList<>();
        for (Worker worker : this.slots) {
            try {
                worker.process().sendLine(NemesisWorker.STOP);
                live.add(worker);
            }
            catch (RuntimeException ex) {
                // A worker that exited on its own (before READY, its history not even opened) says why on stderr.
                this.problems.add("could not tell " + worker.id() + " to stop: " + ex + " (stderr tail: "
                        + worker.process().stderrTail().strip() + ")");
            }
        }
        for (Worker worker : live) {
            try {
                int status = worker.process().waitFor(NemesisWorker.STOP_TIMEOUT.plusSeconds(30));
                if (status != 0) {
                    this.problems.add(worker.id() + " exited with status " + status + " (stderr tail: "
                            + worker.process().stderrTail().strip() + ")");
                }
            }
            catch (AssertionError ex) {
                // Not recorded as killed: its unanswered calls are hangs.
                this.problems.add(worker.id() + " did not exit after " + NemesisWorker.STOP + "; killed");
                worker.process().kill();
            }
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    private static void await(ScheduledFuture<?> heal) throws InterruptedException {
        try {
            heal.get();
        }
        catch (java.util.concurrent.ExecutionException ex) {
            throw new IllegalStateException("a heal failed, so the run cannot show recovery", ex.getCause());
        }
    }

    private record Worker(String id, JvmProcess process) {
    }

    /**
     * A checked run.
     * @param report the checker's report
     * @param historyDir where the histories are
     * @param injected faults injected by kind ({@code kill-worker} for kills)
     * @param problems what went wrong outside the history (unexpected exceptions, workers that did not stop)
     */
    public record Result(Report report, Path historyDir, Map<String, Integer> injected, List<String> problems) {

        /** @return 0 for a clean run, 1 for violations or problems */
        public int exitStatus() {
            return (this.report.exitStatus() == 0 && this.problems.isEmpty()) ? 0 : 1;
        }
    }

    /**
     * What to run.
     * @param store the store
     * @param duration how long the workers contend, the calm end included
     * @param seed the seed of the fault plan and of the workers' choices
     * @param workers worker JVMs at a time
     * @param threads contending threads per worker
     * @param ttl the lease TTL
     * @param historyDir where every process writes its history
     */
    public record Options(Type store, Duration duration, long seed, int workers, int threads, Duration ttl,
            Path historyDir) {

        static final String USAGE = "usage: nemesis [--store etcd|redis|zookeeper|postgres|mariadb] [--duration 5m]"
                + " [--seed N] [--workers 4] [--threads 4] [--ttl 3s] [--history-dir DIR]";

        public Options {
            if (workers < 1 || threads < 1) {
                throw new IllegalArgumentException("--workers and --threads must be at least 1");
            }
            if (ttl.compareTo(Duration.ofSeconds(2)) < 0) {
                // etcd's minimum with the test cluster's 1 s election timeout: it would grant 2 s anyway.
                throw new IllegalArgumentException("--ttl must be at least 2s (etcd's minimum lease TTL here)");
            }
            Duration calm = ttl.plus(store.election()).plus(CALM_MARGIN);
            if (duration.compareTo(calm.plusSeconds(10)) < 0) {
                throw new IllegalArgumentException("--duration must leave 10s of faults before the calm end of "
                        + calm.toSeconds() + "s, so at least " + calm.plusSeconds(10).toSeconds() + "s");
            }
        }

        /** @return the options with a fresh seed, default everything, and a history dir under the temp dir */
        public static Options parse(String... args) {
            Map<String, String> values = new LinkedHashMap<>();
            for (int i = 0; i < args.length; i++) {
                if (!args[i].startsWith("--") || i + 1 == args.length) {
                    throw new IllegalArgumentException("expected --name value pairs, got '" + args[i] + "'");
                }
                values.put(args[i].substring(2), args[++i]);
            }
            Type store = Type.of(values.getOrDefault("store", "etcd"));
            long seed = values.containsKey("seed") ? Long.parseLong(values.get("seed")) : new Random().nextLong();
            Path historyDir;
            try {
                historyDir = values.containsKey("history-dir") ? Path.of(values.get("history-dir"))
                        : Files.createTempDirectory("nemesis-" + store.label() + "-" + seed + "-");
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            Options options = new Options(store, duration(values.getOrDefault("duration", "5m")), seed,
                    Integer.parseInt(values.getOrDefault("workers", "4")),
                    Integer.parseInt(values.getOrDefault("threads", "4")), duration(values.getOrDefault("ttl", "3s")),
                    historyDir);
            values.keySet().removeAll(List.of("store", "duration", "seed", "workers", "threads", "ttl", "history-dir"));
            if (!values.isEmpty()) {
                throw new IllegalArgumentException("unknown options " + values.keySet());
            }
            return options;
        }

        /** @return the quiet end of the run: TTL + the store's election + {@link #CALM_MARGIN} */
        Duration calm() {
            return this.ttl.plus(this.store.election()).plus(CALM_MARGIN);
        }

        /** @return {@code 90s}, {@code 10m}, {@code 1h}, {@code 500ms} or plain seconds as a duration */
        static Duration duration(String text) {
            Matcher matcher = Pattern.compile("(\\d+)(ms|s|m|h)?").matcher(text.trim().toLowerCase(Locale.ROOT));
            if (!matcher.matches()) {
                throw new IllegalArgumentException("not a duration: '" + text + "' (use 90s, 10m, 1h)");
            }
            long amount = Long.parseLong(matcher.group(1));
            String unit = (matcher.group(2) != null) ? matcher.group(2) : "s";
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofSeconds(amount);
            };
        }
    }
}
