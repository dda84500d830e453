package io.github.distlock.nemesis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultHeal;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.HistoryEvent.FaultStart;
import io.github.distlock.nemesis.HistoryEvent.RunStart;
import io.github.distlock.nemesis.HistoryEvent.StoreObservation;
import io.github.distlock.nemesis.HistoryEvent.WorkerKilled;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * A nemesis run against etcd: a three-member cluster, the {@link FencedRegister}, worker JVMs
 * ({@link NemesisWorker}, half of them with local passes and linger) and the faults of a
 * {@link FaultPlan} drawn from the seed; then the {@link Checker} on the history of every process.
 *
 * <p>Timeline: the workers contend for {@code --duration}; faults start and heal in its first
 * part, and the rest is calm (at least TTL + election + {@link #CALM_MARGIN} after the last heal
 * actually completed, so that every key can show it recovered). Then the workers are told to
 * stop and exit, a TTL passes (the leases of killed workers end), and the runner records what the
 * namespace still holds. Every process it started (etcd members, workers) is killed by its PID
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

    static final String NAMESPACE = "/nemesis/";

    /** Quiet time on top of TTL + election after the last heal, for scheduling on a loaded machine. */
    static final Duration CALM_MARGIN = Duration.ofSeconds(2);

    /**
     * How long etcd takes to serve again after a member's loss or heal. The members elect within
     * about 1-3 s (1 s election timeout), but a call that went to a member just before it was
     * paused only fails over when the library's request timeout (5 s by default) ends; so that
     * timeout bounds the gap.
     */
    static final Duration ETCD_ELECTION = Duration.ofSeconds(5);

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();

    private static final Pattern LEASE_ID = Pattern.compile("\"ID\"\\s*:\\s*\"?(\\d+)");

    private final Options options;

    private final HistoryWriter history;

    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());

    private final Map<FaultKind, AtomicInteger> injected = Collections.synchronizedMap(new EnumMap<>(FaultKind.class));

    private final AtomicInteger kills = new AtomicInteger();

    private final AtomicInteger faultIds = new AtomicInteger();

    private final AtomicInteger workerIds = new AtomicInteger();

    private final List<Worker> allWorkers = Collections.synchronizedList(new ArrayList<>());

    private Worker[] slots;

    private EtcdCluster cluster;

    private Client client;

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
        if (!options.store().equals("etcd")) {
            throw new IllegalArgumentException("store '" + options.store() + "' is not supported yet; supported: etcd");
        }
        Files.createDirectories(options.historyDir());
        System.out.println("nemesis: seed " + options.seed() + ", store " + options.store() + ", duration "
                + options.duration().toSeconds() + "s, " + options.workers() + " workers x " + options.threads()
                + " threads, lease TTL " + options.ttl().toMillis() + " ms, history in " + options.historyDir());
        NemesisRunner runner;
        try (HistoryWriter history = HistoryWriter.open(options.historyDir().resolve(RUNNER + ".history"))) {
            history.record(new RunStart(System.nanoTime(), RUNNER, options.seed(), options.store(),
                    System.currentTimeMillis()));
            runner = new NemesisRunner(options, history);
            runner.execute();
        }
        Report report = Report.of(History.of(HistoryReader.readDirectory(options.historyDir())),
                new Checker(bounds(options.ttl())));
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

    /**
     * The checker's bounds for etcd with this lease TTL.
     */
    static Bounds bounds(Duration ttl) {
        // waitOverrun: FencedLock documents timeout + 1 s (a store attempt's floor); 0.5 s more for scheduling
        // on a machine where 3 etcd members and the worker JVMs share few cores.
        Duration waitOverrun = Duration.ofMillis(1_500);
        // lossReport: a holder learns of a deleted entry from its watch, and of an expired lease no later than one
        // TTL after the last keep-alive etcd acknowledged, which was before another process could be granted the key
        // (design, section 7); 1 s more for the watch stream's reconnect and scheduling.
        Duration lossReport = ttl.plusSeconds(1);
        // fairnessSlack: a request is recorded before the call writes its queue entry through etcd's consensus (and
        // grants a session lease first, after a loss): that round trip is the window in which two fair requests may
        // reach etcd in either order.
        Duration fairnessSlack = Duration.ofMillis(250);
        // Fences are etcd revisions (shifted, with local passes in the low bits): they never go back, also when
        // entries are deleted behind the library's back (G12).
        return new Bounds(ttl, ETCD_ELECTION, waitOverrun, lossReport, fairnessSlack, true);
    }

    private void execute() throws IOException, InterruptedException {
        ScheduledExecutorService healer = Executors.newScheduledThreadPool(8, (task) -> {
            Thread thread = new Thread(task, "nemesis-heal");
            thread.setDaemon(true);
            return thread;
        });
        try {
            this.cluster = EtcdCluster.threeMembers();
            this.client = this.cluster.newClient();
            this.register = FencedRegister.start();
            this.slots = new Worker[this.options.workers()];
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
            Duration calm = this.options.ttl().plus(ETCD_ELECTION).plus(CALM_MARGIN);
            FaultPlan plan = FaultPlan.generate(this.options.seed(), this.options.duration().minus(calm),
                    this.options.workers(), this.cluster.size(), this.options.ttl());
            System.out.println("nemesis: " + plan.faults().size() + " faults planned:" + System.lineSeparator() + plan);
            long start = System.nanoTime();
            List<ScheduledFuture<?>> heals = new ArrayList<>();
            ScheduledFuture<?> memberHeal = null;
            ScheduledFuture<?>[] slotHeals = new ScheduledFuture<?>[this.slots.length];
            for (Fault fault : plan.faults()) {
                sleepUntil(start + TimeUnit.MILLISECONDS.toNanos(fault.startMillis()));
                boolean memberFault = fault.action() == Action.KILL_MEMBER || fault.action() == Action.PAUSE_MEMBER;
                boolean workerFault = fault.action() == Action.KILL_WORKER || fault.action() == Action.PAUSE_WORKER;
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
            long calmEnd = Math.max(System.nanoTime() + calm.toNanos(), start + this.options.duration().toNanos());
            System.out.println("nemesis: every fault healed; calm until the end");
            sleepUntil(calmEnd);
            stopWorkers();
            // The leases of killed workers end one TTL after their last keep-alive.
            Thread.sleep(this.options.ttl().plusSeconds(1).toMillis());
            observe();
        }
        finally {
            healer.shutdownNow();
            for (Worker worker : this.allWorkers) {
                worker.process().close();
            }
            if (this.register != null) {
                this.register.close();
            }
            if (this.client != null) {
                this.client.close();
            }
            if (this.cluster != null) {
                this.cluster.close();
            }
        }
    }

    private Worker startWorker(int slot) {
        String id = "w" + this.workerIds.incrementAndGet();
        boolean handoff = slot % 2 == 0;
        NemesisWorker.Settings settings = new NemesisWorker.Settings(this.cluster.clientEndpoints(), NAMESPACE,
                this.options.ttl(), id, this.options.historyDir(), KEYS, this.options.threads(), this.options.seed(),
                handoff, this.register.address());
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
                this.slots[fault.target()] = startWorker(fault.target());
                // Read once it is warmed up.
                this.slots[fault.target()].process().sendLine(NemesisWorker.GO);
                System.out.println("nemesis: killed " + worker.id() + ", replaced by " + this.slots[fault.target()].id());
                return null;
            }
            case PAUSE_WORKER -> {
                Worker worker = this.slots[fault.target()];
                start(id, FaultKind.PAUSE_WORKER, worker.id(), false);
                try {
                    worker.process().pause();
                }
                catch (RuntimeException ex) {
                    this.problems.add("could not pause " + worker.id() + ": " + ex);
                    heal = 0;
                }
                return healer.schedule(() -> {
                    worker.process().resume();
                    heal(id);
                }, heal, TimeUnit.MILLISECONDS);
            }
            case KILL_MEMBER, PAUSE_MEMBER -> {
                int leader = fault.leader() ? this.cluster.leaderIndex() : -1;
                int index = (leader >= 0) ? leader : fault.target();
                EtcdCluster.Member member = this.cluster.member(index);
                String target = "m" + index + ((leader >= 0) ? "(leader)" : "");
                boolean kill = fault.action() == Action.KILL_MEMBER;
                // A member restarts on its own data, with the quorum's: no entry or lease is lost.
                start(id, kill ? FaultKind.KILL_MEMBER : FaultKind.PAUSE_MEMBER, target, false);
                if (kill) {
                    member.kill();
                }
                else {
                    member.pause();
                }
                return healer.schedule(() -> {
                    if (kill) {
                        member.restart();
                    }
                    else {
                        member.resume();
                    }
                    heal(id);
                }, heal, TimeUnit.MILLISECONDS);
            }
            case DELETE_ENTRIES -> {
                String[] scopes = { "every entry", "the entries of '" + KEYS.get(0) + "'",
                        "the oldest entry of '" + KEYS.get(0) + "'" };
                start(id, FaultKind.DELETE_ENTRIES, scopes[fault.target()], true);
                // In the background: during a member pause the delete can wait for that member's heal.
                return healer.schedule(() -> {
                    long deleted = deleteEntries(fault.target());
                    heal(id);
                    System.out.println("nemesis: " + id + " deleted " + deleted + " entries");
                }, 0, TimeUnit.MILLISECONDS);
            }
            default -> throw new IllegalStateException("unknown action " + fault.action());
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

    /**
     * Deletes entries behind the library's back, retrying until etcd confirms a delete (for up to
     * 30 s, past any member pause), so that the fault window covers it. etcd may fail a delete
     * whose outcome it does not know ("request timed out"); such an attempt is either applied
     * before a later one that succeeds (one raft log) or never, so a confirmed retry closes it.
     */
    private long deleteEntries(int scope) {
        ByteSequence prefix = bytes(NAMESPACE + "#" + ((scope == 0) ? "" : KEYS.get(0) + "/"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Exception failure = null;
        while (System.nanoTime() < deadline) {
            try {
                if (scope < 2) {
                    return this.client.getKVClient().delete(prefix, DeleteOption.builder().isPrefix(true).build())
                        .get(10, TimeUnit.SECONDS).getDeleted();
                }
                List<KeyValue> oldest = this.client.getKVClient()
                    .get(prefix, GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build())
                    .get(10, TimeUnit.SECONDS).getKvs();
                if (oldest.isEmpty()) {
                    return 0;
                }
                return this.client.getKVClient().delete(oldest.get(0).getKey()).get(10, TimeUnit.SECONDS).getDeleted();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                failure = ex;
                break;
            }
            catch (Exception ex) {
                failure = ex;
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        this.problems.add("etcd confirmed no delete of entries within 30 s (last failure: " + failure
                + "); one may have been applied after its fault window");
        return -1;
    }

    private void stopWorkers() {
        List<Worker> live = new ArrayList<>();
        for (Worker worker : this.slots) {
            try {
                worker.process().sendLine(NemesisWorker.STOP);
                live.add(worker);
            }
            catch (RuntimeException ex) {
                this.problems.add("could not tell " + worker.id() + " to stop: " + ex);
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

    /** Records what the namespace still holds: entries, and leases (the cluster is the run's own). */
    private void observe() {
        List<String> keys;
        List<String> leases;
        try {
            keys = this.client.getKVClient()
                .get(bytes(NAMESPACE), GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                .get(30, TimeUnit.SECONDS).getKvs().stream()
                .map((kv) -> kv.getKey().toString(StandardCharsets.UTF_8)).toList();
            leases = leases();
        }
        catch (Exception ex) {
            throw new IllegalStateException("could not read what the store holds after the run", ex);
        }
        String detail = "keys " + keys.stream().limit(10).toList() + ", leases "
                + leases.stream().limit(10).toList();
        this.history.record(new StoreObservation(System.nanoTime(), RUNNER, keys.size(), leases.size(), detail));
    }

    /** Lease ids, from etcd's JSON gateway: jetcd 0.8 has no call that lists leases. */
    private List<String> leases() throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(this.cluster.clientEndpoint() + "/v3/lease/leases"))
            .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("listing leases answered " + response.statusCode() + ": " + response.body());
        }
        List<String> ids = new ArrayList<>();
        Matcher id = LEASE_ID.matcher(response.body());
        while (id.find()) {
            ids.add(Long.toHexString(Long.parseLong(id.group(1))));
        }
        return ids;
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
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
     * @param store the store, only {@code etcd} for now
     * @param duration how long the workers contend, the calm end included
     * @param seed the seed of the fault plan and of the workers' choices
     * @param workers worker JVMs at a time
     * @param threads contending threads per worker
     * @param ttl the lease TTL
     * @param historyDir where every process writes its history
     */
    public record Options(String store, Duration duration, long seed, int workers, int threads, Duration ttl,
            Path historyDir) {

        static final String USAGE = "usage: nemesis [--store etcd] [--duration 5m] [--seed N] [--workers 4]"
                + " [--threads 4] [--ttl 3s] [--history-dir DIR]";

        public Options {
            if (workers < 1 || threads < 1) {
                throw new IllegalArgumentException("--workers and --threads must be at least 1");
            }
            if (ttl.compareTo(Duration.ofSeconds(2)) < 0) {
                // etcd's minimum with the test cluster's 1 s election timeout: it would grant 2 s anyway.
                throw new IllegalArgumentException("--ttl must be at least 2s (etcd's minimum lease TTL here)");
            }
            Duration calm = ttl.plus(ETCD_ELECTION).plus(CALM_MARGIN);
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
            String store = values.getOrDefault("store", "etcd");
            if (!store.equals("etcd")) {
                throw new IllegalArgumentException("store '" + store + "' is not supported yet; supported: etcd");
            }
            long seed = values.containsKey("seed") ? Long.parseLong(values.get("seed")) : new Random().nextLong();
            Path historyDir;
            try {
                historyDir = values.containsKey("history-dir") ? Path.of(values.get("history-dir"))
                        : Files.createTempDirectory("nemesis-" + store + "-" + seed + "-");
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
