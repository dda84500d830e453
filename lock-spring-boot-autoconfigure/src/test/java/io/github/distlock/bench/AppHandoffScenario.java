package io.github.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * Scenario 10: the handoff an application sees. Three Spring Boot applications (one JVM each, the
 * etcd store as auto-configured) with two threads each call a {@code @DistributedLock(fair = true)}
 * method on one key that holds it for 200 ms, so every waiter sits idle in a long wait; the gap is
 * the time from one holder's method returning to the next holder's method starting, whichever JVM
 * or thread it is. The same with the registry by hand around the same work, and with an empty
 * section by hand (the benchmark's handoff), on the same JVMs in the same run, tell where the time
 * goes: the aspect, or waking up after a long wait.
 */
final class AppHandoffScenario {

    private static final int PROCESSES = 3;

    private static final int THREADS = 2;

    private static final long HOLD_MILLIS = 200;

    private static final long RAMP_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private static final Duration LOOP_TIMEOUT = Duration.ofSeconds(60);

    private AppHandoffScenario() {
    }

    static void run(EtcdCluster etcd, ResultTable table) throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-app-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(AppHandoffWorkerMain.class)
                    .args(String.join(",", etcd.clientEndpoints()), "/bench/s10/", "app-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            System.out.println("[bench] scenario 10: warming up the applications (not counted)");
            measure(workers, directory, "warm-up-1", "registry", 0, TimeUnit.SECONDS.toNanos(3));
            measure(workers, directory, "warm-up-2", "annotated", 0, TimeUnit.SECONDS.toNanos(3));
            Samples empty = new Samples();
            Samples byHand = new Samples();
            Samples annotated = new Samples();
            for (int round = 1; round <= 2; round++) {
                empty.addAll(measure(workers, directory, "empty-" + round, "registry", 0, TimeUnit.SECONDS.toNanos(4)));
                byHand.addAll(measure(workers, directory, "by-hand-" + round, "registry", HOLD_MILLIS,
                        TimeUnit.SECONDS.toNanos(8)));
                annotated.addAll(measure(workers, directory, "annotated-" + round, "annotated", HOLD_MILLIS,
                        TimeUnit.SECONDS.toNanos(8)));
            }
            double ratio = (double) annotated.median() / empty.median();
            table.add("10", "application handoff: @DistributedLock(fair), 200 ms holds, 3 JVMs x 2 threads",
                    ResultTable.latency(annotated), "empty section by hand " + ResultTable.latency(empty),
                    ResultTable.ratio(ratio), "median <= 2x empty", ratio <= 2);
            table.info("10", "same 200 ms holds through the registry by hand", ResultTable.latency(byHand), "", "");
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }

    /** @return the gaps from each method's return to the next method's start, in any JVM or thread */
    private static Samples measure(List<JvmProcess> workers, Path directory, String run, String mode, long holdMillis,
            long windowNanos) throws Exception {
        System.out.println("[bench] scenario 10: " + run + " (" + mode + ", " + holdMillis + " ms holds)");
        long windowStart = System.nanoTime() + RAMP_UP_NANOS;
        long windowEnd = windowStart + windowNanos;
        long stopAt = windowEnd + TimeUnit.MILLISECONDS.toNanos(holdMillis + 300);
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            Path file = directory.resolve(run + "-" + i + ".txt");
            files.add(file);
            workers.get(i).sendLine(String.join(" ", "CALLS", run, mode, Integer.toString(THREADS),
                    Long.toString(holdMillis), Long.toString(windowStart), Long.toString(windowEnd),
                    Long.toString(stopAt), file.toString()));
        }
        for (JvmProcess worker : workers) {
            worker.awaitLine(line -> line.startsWith("DONE " + run + " "), LOOP_TIMEOUT);
        }
        List<long[]> holds = new ArrayList<>();
        for (Path file : files) {
            for (String line : Files.readAllLines(file)) {
                String[] fields = line.split(" ");
                holds.add(new long[] { Long.parseLong(fields[0]), Long.parseLong(fields[1]) });
            }
        }
        holds.sort(Comparator.comparingLong(hold -> hold[0]));
        Samples gaps = new Samples();
        for (int i = 1; i < holds.size(); i++) {
            gaps.add(holds.get(i)[0] - holds.get(i - 1)[1]);
        }
        System.out.println("[bench] " + run + ": " + holds.size() + " holds, gap " + ResultTable.latency(gaps));
        return gaps;
    }
}
