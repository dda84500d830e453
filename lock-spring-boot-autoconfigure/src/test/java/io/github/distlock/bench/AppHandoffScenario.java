package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;

import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * Scenario 10: the handoff an application sees. Three Spring Boot applications (one JVM each, the
 * etcd store as auto-configured) with two threads each call a {@code @DistributedLock(fair = true)}
 * method on one key that holds it for 200 ms, so every waiter sits idle in a long wait; the gap is
 * the time from one holder's method returning to the next holder's method starting, whichever JVM
 * or thread it is. The same with the registry by hand around the same work, and with an empty
 * section by hand (the benchmark's handoff), on the same JVMs in the same run, tell where the time
 * goes: the aspect, or waking up after a long wait. A raw etcd hop between two clients (a put, its
 * watch event, the thread waiting for it), 200 ms apart and back to back, is the floor of both.
 */
final class AppHandoffScenario {

    private static final int PROCESSES = 3;

    private static final int THREADS = 2;

    private static final long HOLD_MILLIS = 200;

    private static final long RAMP_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private static final Duration LOOP_TIMEOUT = Duration.ofSeconds(60);

    /** Hops per round of the raw etcd reference: back to back, and 200 ms apart (8 s). */
    private static final int RAW_BUSY_HOPS = 2000;

    private static final int RAW_IDLE_HOPS = 40;

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
            System.out.println("[bench] scenario 10: raw etcd hops between two clients");
            Samples rawIdle = new Samples();
            Samples rawBusy = new Samples();
            for (int round = 1; round <= 2; round++) {
                rawBusy.addAll(rawHops(etcd, 0, RAW_BUSY_HOPS));
                rawIdle.addAll(rawHops(etcd, HOLD_MILLIS, RAW_IDLE_HOPS));
            }
            table.info("10", "raw etcd hop: put, watch event, waiting thread of the other client; 200 ms apart",
                    ResultTable.latency(rawIdle), "back and forth at once " + ResultTable.latency(rawBusy),
                    ResultTable.ratio((double) rawIdle.median() / rawBusy.median()));
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }

    /**
     * The hop of a handoff on raw etcd, without a lock: two clients take turns, each with a thread
     * that waits for the other's put to arrive through its watch, pauses {@code pauseMillis} (the
     * hold) and puts in turn; a hop is from the put's call to the waiting thread's return, which
     * is what a lock's handoff cannot go below. After a pause every part starts from idle, as in the
     * application's handoff; without one, as in the empty-section handoff.
     * @return the hops' times
     */
    private static Samples rawHops(EtcdCluster etcd, long pauseMillis, int hops) throws Exception {
        // One more: the first hop may wait for etcd to catch up a watch that started after the put.
        AtomicInteger remaining = new AtomicInteger(hops + 1);
        try (Client first = etcd.newClient(); Client second = etcd.newClient()) {
            // Keys of this run alone, so that a late put of an earlier run starts no second token here.
            String prefix = "/bench/s10-raw/" + UUID.randomUUID() + "/";
            ByteSequence toFirst = ByteSequence.from(prefix + "to-first", StandardCharsets.UTF_8);
            ByteSequence toSecond = ByteSequence.from(prefix + "to-second", StandardCharsets.UTF_8);
            // Watched from the next revision on, so that no put is missed while the watches start.
            long next = first.getKVClient().get(toFirst).get().getHeader().getRevision() + 1;
            RawPlayer a = new RawPlayer(first, toFirst, toSecond, next, pauseMillis, remaining);
            RawPlayer b = new RawPlayer(second, toSecond, toFirst, next, pauseMillis, remaining);
            b.firstOfRun = true;
            try {
                a.start();
                b.start();
                a.put();
                a.join(LOOP_TIMEOUT.toMillis());
                b.join(LOOP_TIMEOUT.toMillis());
                if (a.isAlive() || b.isAlive()) {
                    throw new IllegalStateException("raw hops did not finish within " + LOOP_TIMEOUT);
                }
            }
            finally {
                a.close();
                b.close();
            }
            Samples all = new Samples();
            all.addAll(a.hops);
            all.addAll(b.hops);
            if (all.count() != hops) {
                throw new IllegalStateException("raw hops: " + all.count() + " of " + hops + " measured");
            }
            return all;
        }
    }

    /** One side of {@link #rawHops}: puts its send time to the other side's key, takes the other side's from its own. */
    private static final class RawPlayer extends Thread {

        private final KV kv;

        private final ByteSequence theirs;

        private final long pauseMillis;

        private final AtomicInteger remaining;

        private final BlockingQueue<Long> arrived = new LinkedBlockingQueue<>();

        private final Watch.Watcher watcher;

        private final Samples hops = new Samples();

        /** Whether the next hop that arrives is the run's first, which is left out. */
        private boolean firstOfRun;

        RawPlayer(Client client, ByteSequence mine, ByteSequence theirs, long fromRevision, long pauseMillis,
                AtomicInteger remaining) {
            super("raw-hops");
            setDaemon(true);
            this.kv = client.getKVClient();
            this.theirs = theirs;
            this.pauseMillis = pauseMillis;
            this.remaining = remaining;
            this.watcher = client.getWatchClient().watch(mine, WatchOption.builder().withRevision(fromRevision).build(),
                    (response) -> response.getEvents().stream()
                        .filter((event) -> event.getEventType() == WatchEvent.EventType.PUT)
                        .forEach((event) -> this.arrived.add(Long.parseLong(event.getKeyValue().getValue()
                            .toString(StandardCharsets.UTF_8)))));
        }

        void put() {
            this.kv.put(this.theirs, ByteSequence.from(Long.toString(System.nanoTime()), StandardCharsets.UTF_8));
        }

        @Override
        public void run() {
            try {
                while (true) {
                    Long sentAt = this.arrived.poll(LOOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                    if (sentAt == null) {
                        return;
                    }
                    long hop = System.nanoTime() - sentAt;
                    if (this.remaining.getAndDecrement() <= 0) {
                        // The other side stops too: its queue gets a last put that ends its wait.
                        put();
                        return;
                    }
                    if (this.firstOfRun) {
                        this.firstOfRun = false;
                    }
                    else {
                        this.hops.add(hop);
                    }
                    if (this.pauseMillis > 0) {
                        Thread.sleep(this.pauseMillis);
                    }
                    put();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        void close() {
            this.watcher.close();
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
