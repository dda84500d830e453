package io.github.distlock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.JvmProcess;

/**
 * Contention windows across worker processes that take {@code LOOP} commands (see
 * {@link RedisBenchWorkerMain}, {@link ZookeeperBenchWorkerMain}): every worker starts looping
 * before the window opens and stops after it closes, and only acquisitions inside it count.
 */
final class ContentionWindows {

    private static final long RAMP_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final long WIND_DOWN_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    private static final Duration LOOP_TIMEOUT = Duration.ofSeconds(60);

    private final String label;

    private final List<JvmProcess> workers;

    private final Path directory;

    private int runs;

    /**
     * @param label how the progress lines name the scenario
     * @param workers the worker processes, ready for commands
     * @param directory where the workers write their records
     */
    ContentionWindows(String label, List<JvmProcess> workers, Path directory) {
        this.label = label;
        this.workers = workers;
        this.directory = directory;
    }

    /** Runs one window of {@code mode} on the key {@code contended} and adds its records to {@code into}. */
    void measure(String mode, long windowNanos, Contention into) throws Exception {
        measure(mode, 1, windowNanos, into);
    }

    /** The same with {@code threads} threads looping in each worker. */
    void measure(String mode, int threads, long windowNanos, Contention into) throws Exception {
        String run = mode + "-" + (++this.runs);
        System.out.println("[bench] " + this.label + ": " + run + ", " + this.workers.size() + " processes, "
                + TimeUnit.NANOSECONDS.toSeconds(windowNanos) + " s");
        long windowStart = System.nanoTime() + RAMP_UP_NANOS;
        long windowEnd = windowStart + windowNanos;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < this.workers.size(); i++) {
            Path file = this.directory.resolve(run + "-" + i + ".txt");
            files.add(file);
            this.workers.get(i).sendLine(String.join(" ", "LOOP", run, mode, "contended", Long.toString(windowStart),
                    Long.toString(windowEnd), Long.toString(windowEnd + WIND_DOWN_NANOS), file.toString(),
                    Integer.toString(threads)));
        }
        HandoffScenario.sleepUntil(windowEnd);
        for (JvmProcess worker : this.workers) {
            worker.awaitLine(line -> line.startsWith("DONE " + run + " "), LOOP_TIMEOUT);
        }
        long acquisitions = into.add(files, windowNanos, 0);
        System.out.println(ResultTable.number("[bench] %s: %.0f acquisitions/s", run, acquisitions / (windowNanos / 1e9)));
    }
}
