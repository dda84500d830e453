package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * Scenario 8: one hot key, four processes with eight threads each, unfair locks and an empty
 * critical section (the flash-sale case). With local handoffs (the default) a hold passes between
 * the threads of a process without etcd round trips for up to the pass window, then goes back to
 * etcd; without them (the reference, same workers, same run) every acquisition goes to etcd. The
 * rate is compared with the raw floor's serial rate, the shares per process show that no process
 * starves, and the waits ({@code lock()} called to returned) show how long a thread waits.
 */
final class HotKeyScenario {

    private static final int PROCESSES = 4;

    private static final int THREADS = 8;

    private static final long RAMP_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(4);

    private static final long WIND_DOWN_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration LOOP_TIMEOUT = Duration.ofSeconds(60);

    private static final ByteSequence REVISION_PROBE = ByteSequence.from("/bench/revision-probe",
            StandardCharsets.UTF_8);

    private HotKeyScenario() {
    }

    static void run(EtcdCluster etcd, Client client, UncontendedScenario.Floor floor, ResultTable table)
            throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-hot-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(BenchWorkerMain.class)
                    .args(String.join(",", etcd.clientEndpoints()), "/bench/s8/", "10", "hot-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            System.out.println("[bench] scenario 8: warming up the workers (not counted)");
            measure(client, workers, directory, "unfair", "warm-up", WARMUP_RUN_NANOS, new Contention(PROCESSES));
            Contention handoff = new Contention(PROCESSES);
            Contention direct = new Contention(PROCESSES);
            measure(client, workers, directory, "unfair", "handoff-1", WINDOW_NANOS, handoff);
            measure(client, workers, directory, "unfair-direct", "direct-1", WINDOW_NANOS, direct);
            measure(client, workers, directory, "unfair-direct", "direct-2", WINDOW_NANOS, direct);
            measure(client, workers, directory, "unfair", "handoff-2", WINDOW_NANOS, handoff);
            report(floor, handoff, direct, table);
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }

    private static void report(UncontendedScenario.Floor floor, Contention handoff, Contention direct,
            ResultTable table) {
        double floorRate = floor.cycles().serialRate();
        String shape = PROCESSES + " processes x " + THREADS + " threads";
        table.add("8", "hot key, " + shape + ", unfair: acquisitions", ResultTable.rate(handoff.rate()),
                "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(handoff.rate() / floorRate),
                ">= 5x floor", handoff.rate() >= 5 * floorRate);
        double leastShare = handoff.leastShare();
        table.add("8", "hot key: least-served process", ResultTable.number("%.1f%% of acquisitions", 100 * leastShare),
                "fair share 25% (" + handoff.shares() + ")", ResultTable.ratio(leastShare * PROCESSES),
                ">= 0.50x fair share", leastShare * PROCESSES >= 0.5);
        table.info("8", "hot key: wait in lock() (any thread)", ResultTable.latency(handoff.waits()) + ", p99.9 "
                + ResultTable.millis(handoff.waits().percentile(0.999)) + ", max "
                + ResultTable.millis(handoff.waits().percentile(1.0)),
                "without local handoff " + ResultTable.latency(direct.waits()) + ", max "
                        + ResultTable.millis(direct.waits().percentile(1.0)), "");
        table.info("8", "hot key: gap when another process takes over", ResultTable.latency(handoff.gaps()),
                ResultTable.number("%.0f/s process switches", handoff.handoffRate()), "");
        table.info("8", "hot key without local handoff (every acquisition to etcd)", ResultTable.rate(direct.rate()),
                "shares " + direct.shares(), ResultTable.ratio(handoff.rate() / direct.rate()) + " with handoff");
        table.info("8", "hot key: etcd writes per acquisition", ResultTable.number("%.3f", handoff.writesPerAcquisition()),
                ResultTable.number("without handoff %.2f", direct.writesPerAcquisition()), "");
    }

    private static void measure(Client client, List<JvmProcess> workers, Path directory, String mode, String run,
            long windowNanos, Contention into) throws Exception {
        System.out.println("[bench] scenario 8: " + run + " (" + mode + "), " + PROCESSES + "x" + THREADS + ", "
                + TimeUnit.NANOSECONDS.toSeconds(windowNanos) + " s");
        BenchmarkMain.compact(client);
        long windowStart = System.nanoTime() + RAMP_UP_NANOS;
        long windowEnd = windowStart + windowNanos;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            Path file = directory.resolve(run + "-" + i + ".txt");
            files.add(file);
            workers.get(i).sendLine(String.join(" ", "THREADS", run, mode, "hot", Integer.toString(THREADS),
                    Long.toString(windowStart), Long.toString(windowEnd), Long.toString(windowEnd + WIND_DOWN_NANOS),
                    file.toString()));
        }
        HandoffScenario.sleepUntil(windowStart);
        long firstRevision = revision(client);
        HandoffScenario.sleepUntil(windowEnd);
        long lastRevision = revision(client);
        for (JvmProcess worker : workers) {
            worker.awaitLine(line -> line.startsWith("DONE " + run + " "), LOOP_TIMEOUT);
        }
        long acquisitions = into.add(files, windowNanos, lastRevision - firstRevision);
        System.out.println(ResultTable.number("[bench] %s: %.0f acquisitions/s", run, acquisitions / (windowNanos / 1e9)));
    }

    private static long revision(Client client) throws Exception {
        return client.getKVClient().get(REVISION_PROBE).get().getHeader().getRevision();
    }
}
