package io.github.distlock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * Scenarios 2 and 3: four processes loop on one key with an empty critical section, fair and then
 * unfair, and the same four processes on etcd's own lock service for reference. Fair and unfair
 * runs alternate (fair, unfair, unfair, fair) so that drift does not favour either, and each run
 * starts from a compacted keyspace, so that none pays for the deleted entries of the one before.
 *
 * <p>Each process records when its {@code lock()} returned and when it called {@code unlock()};
 * sorted by acquisition time, the records give the handoff gap: from one holder's release to the
 * next holder's return from {@code lock()}. The etcd revision, read at both ends of the window,
 * counts the writes per acquisition.
 */
final class HandoffScenario {

    private static final int PROCESSES = 4;

    /** All four processes are contending before a window opens. */
    private static final long RAMP_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(8);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** Contention goes on past the window, so its last acquisitions are as contended as the rest. */
    private static final long WIND_DOWN_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration LOOP_TIMEOUT = Duration.ofSeconds(60);

    private static final ByteSequence REVISION_PROBE = ByteSequence.from("/bench/revision-probe",
            StandardCharsets.UTF_8);

    private final Client client;

    private final List<JvmProcess> workers;

    private final Path directory;

    private final long etcdPid;

    private int runs;

    private HandoffScenario(Client client, List<JvmProcess> workers, Path directory, long etcdPid) {
        this.client = client;
        this.workers = workers;
        this.directory = directory;
        this.etcdPid = etcdPid;
    }

    static void run(EtcdCluster etcd, Client client, UncontendedScenario.Floor floor, ResultTable table)
            throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(BenchWorkerMain.class)
                    .args(String.join(",", etcd.clientEndpoints()), "/bench/s2/", "10", "worker-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            new HandoffScenario(client, workers, directory, etcd.member(0).pid()).measureAll(floor, table);
        }
        finally {
            workers.forEach(JvmProcess::close);
            deleteRecursively(directory);
        }
    }

    private void measureAll(UncontendedScenario.Floor floor, ResultTable table) throws Exception {
        // The workers' first seconds of contention run cold code (class loading, JIT) at half speed or
        // less: not counted, or they would count against whichever mode came first.
        System.out.println("[bench] scenario 2/3: warming up the workers (not counted)");
        measure("fair", WARMUP_RUN_NANOS, new Contention(PROCESSES));
        Contention fair = new Contention(PROCESSES);
        Contention unfair = new Contention(PROCESSES);
        measure("fair", WINDOW_NANOS, fair);
        measure("unfair", WINDOW_NANOS, unfair);
        measure("unfair", WINDOW_NANOS, unfair);
        measure("fair", WINDOW_NANOS, fair);
        Contention lockService = new Contention(PROCESSES);
        measure("jetcd", 2 * WINDOW_NANOS, lockService);

        double floorRate = floor.cycles().serialRate();
        long oneWrite = floor.writes().median();
        table.add("2", "fair handoff, 4 processes: acquisitions", ResultTable.rate(fair.rate()),
                "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(fair.rate() / floorRate),
                ">= 0.75x floor", fair.rate() >= 0.75 * floorRate);
        table.add("2", "fair handoff gap (release -> next holder returns)", ResultTable.latency(fair.gaps()),
                "one etcd write: median " + ResultTable.millis(oneWrite),
                ResultTable.ratio((double) fair.gaps().median() / oneWrite), "p99 < 15 ms",
                fair.gaps().p99() < TimeUnit.MILLISECONDS.toNanos(15));
        table.add("2", "fair handoff vs etcd's Lock service", ResultTable.rate(fair.rate()),
                "jetcd Lock " + ResultTable.rate(lockService.rate()),
                ResultTable.ratio(fair.rate() / lockService.rate()), ">= 10x jetcd Lock",
                fair.rate() >= 10 * lockService.rate());
        table.info("2", "fair: etcd writes per acquisition; shares",
                ResultTable.number("%.2f", fair.writesPerAcquisition()), "per-process " + fair.shares(), "");
        // Four workers and etcd share the machine: on few cores their CPU bounds the rate too, not only etcd's writes.
        table.info("2", "fair: CPU of etcd and the 4 workers", fair.cpuPerAcquisition("etcd"),
                "jetcd Lock: " + lockService.cpuPerAcquisition("etcd"), "");
        table.info("2", "jetcd Lock service, 4 processes (reference)",
                ResultTable.rate(lockService.rate()) + ", gap " + ResultTable.latency(lockService.gaps()),
                ResultTable.number("%.2f writes/acq.", lockService.writesPerAcquisition()), "");
        table.add("3", "unfair handoff, 4 processes: acquisitions", ResultTable.rate(unfair.rate()),
                "fair " + ResultTable.rate(fair.rate()), ResultTable.ratio(unfair.rate() / fair.rate()),
                ">= fair rate", unfair.rate() >= fair.rate());
        double leastShare = unfair.leastShare();
        table.add("3", "unfair: least-served process", ResultTable.number("%.1f%% of acquisitions", 100 * leastShare),
                "fair share 25% (" + unfair.shares() + ")", ResultTable.ratio(leastShare * PROCESSES),
                ">= 0.50x fair share", leastShare * PROCESSES >= 0.5);
        table.add("3", "unfair: etcd writes per acquisition (revision delta)",
                ResultTable.number("%.2f", unfair.writesPerAcquisition()), "", "", "<= 2.5",
                unfair.writesPerAcquisition() <= 2.5);
        table.info("3", "unfair handoff gap", ResultTable.latency(unfair.gaps()),
                "fair " + ResultTable.latency(fair.gaps()), "");
    }

    /** One window of contention: all workers loop from now on; records inside the window count. */
    private void measure(String mode, long windowNanos, Contention into) throws Exception {
        String run = mode + "-" + (++this.runs);
        System.out.println("[bench] scenario 2/3: " + run + ", " + PROCESSES + " processes, "
                + TimeUnit.NANOSECONDS.toSeconds(windowNanos) + " s");
        BenchmarkMain.compact(this.client);
        long windowStart = System.nanoTime() + RAMP_UP_NANOS;
        long windowEnd = windowStart + windowNanos;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            Path file = this.directory.resolve(run + "-" + i + ".txt");
            files.add(file);
            this.workers.get(i).sendLine(String.join(" ", "LOOP", run, mode, "contended", Long.toString(windowStart),
                    Long.toString(windowEnd), Long.toString(windowEnd + WIND_DOWN_NANOS), file.toString()));
        }
        List<Long> pids = this.workers.stream().map(JvmProcess::pid).toList();
        sleepUntil(windowStart);
        long firstRevision = revision();
        CpuUse cpuAtStart = CpuUse.now(this.etcdPid, pids);
        sleepUntil(windowEnd);
        long lastRevision = revision();
        into.addCpu(CpuUse.now(this.etcdPid, pids).since(cpuAtStart));
        for (JvmProcess worker : this.workers) {
            worker.awaitLine(line -> line.startsWith("DONE " + run + " "), LOOP_TIMEOUT);
        }
        long acquisitions = into.add(files, windowNanos, lastRevision - firstRevision);
        System.out.println(ResultTable.number("[bench] %s: %.0f acquisitions/s", run,
                acquisitions / (windowNanos / 1e9)));
    }

    static void deleteRecursively(Path directory) throws IOException {
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    private long revision() throws Exception {
        return this.client.getKVClient().get(REVISION_PROBE).get().getHeader().getRevision();
    }

    static void sleepUntil(long nanoTime) throws InterruptedException {
        long remaining = nanoTime - System.nanoTime();
        if (remaining > 0) {
            TimeUnit.NANOSECONDS.sleep(remaining);
        }
    }
}
