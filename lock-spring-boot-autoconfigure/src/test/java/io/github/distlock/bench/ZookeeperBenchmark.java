package io.github.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The ZooKeeper benchmarks, on a standalone ZooKeeper server of their own (loopback, data on the
 * machine's temporary directory, fsync on as ZooKeeper ships), each measurement beside the raw
 * ZooKeeper floor and Curator's {@link InterProcessMutex} measured in the same run:
 * <ul>
 * <li>Z1, uncontended acquire and release by one thread: the registry (unfair and fair), the raw
 * floor (create an ephemeral node, delete it: the textbook ZooKeeper lock, on the same client's
 * ZooKeeper handle) and {@code InterProcessMutex}, taking turns in rounds so drift hits all alike;</li>
 * <li>Z2 and Z3, four processes looping on one key with an empty critical section: fair and unfair
 * against {@code InterProcessMutex} (fair, the only mode it has), runs alternating.</li>
 * </ul>
 */
final class ZookeeperBenchmark {

    private static final int WARMUP_CYCLES = 1_000;

    private static final int ROUNDS = 10;

    private static final int CYCLES_PER_ROUND = 300;

    private static final int PROCESSES = 4;

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(4);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private ZookeeperBenchmark() {
    }

    /** @return the ZooKeeper server version, for the table's heading */
    static String run(ResultTable table) throws Exception {
        try (ZooKeeperEnsemble zookeeper = ZooKeeperEnsemble.standalone()) {
            System.out.println("[bench] zookeeper Z1: uncontended acquire+release");
            double floorRate = uncontended(zookeeper, table);
            handoffs(zookeeper, floorRate, table);
            return org.apache.zookeeper.Version.getFullVersion();
        }
    }

    private static double uncontended(ZooKeeperEnsemble zookeeper, ResultTable table) throws Exception {
        Samples floor = new Samples();
        Samples unfair = new Samples();
        Samples fair = new Samples();
        Samples curator = new Samples();
        CuratorFramework client = ZookeeperBenchWorkerMain.startedClient(zookeeper.connectString());
        try (ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client).namespace("/bench-z1")
            .ownerIdentity("bench-z1").build()) {
            ZooKeeper raw = client.getZookeeperClient().getZooKeeper();
            client.create().creatingParentsIfNeeded().forPath("/bench-z1-floor/parent");
            List<Lock> locks = List.of(registry.obtain("uncontended", false), registry.obtain("uncontended", true),
                    new ZookeeperBenchWorkerMain.CuratorMutex(new InterProcessMutex(client, "/bench-z1-curator")));
            List<Samples> samples = List.of(unfair, fair, curator);
            UncontendedRounds.measure(() -> floorCycle(raw), floor, locks, samples, WARMUP_CYCLES, ROUNDS, CYCLES_PER_ROUND);
        }
        finally {
            client.close();
        }
        table.info("Z1", "raw ZooKeeper floor: create ephemeral + delete, serial",
                ResultTable.latency(floor) + ", " + ResultTable.rate(floor.serialRate()), "", "");
        addUncontended(table, "unfair", unfair, floor);
        addUncontended(table, "fair", fair, floor);
        table.info("Z1", "Curator InterProcessMutex acquire()+release() (reference)", ResultTable.latency(curator),
                "floor " + ResultTable.latency(floor), ResultTable.ratio((double) curator.median() / floor.median()));
        return floor.serialRate();
    }

    private static void addUncontended(ResultTable table, String mode, Samples measured, Samples floor) {
        double ratio = (double) measured.median() / floor.median();
        table.add("Z1", "uncontended lock()+unlock(), " + mode, ResultTable.latency(measured),
                "floor " + ResultTable.latency(floor), ResultTable.ratio(ratio), "median <= 1.20x floor",
                ratio <= 1.20);
    }

    private static void floorCycle(ZooKeeper raw) throws Exception {
        String path = raw.create("/bench-z1-floor/parent/lock", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                CreateMode.EPHEMERAL);
        raw.delete(path, -1);
    }

    private static void handoffs(ZooKeeperEnsemble zookeeper, double floorRate, ResultTable table) throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-zookeeper-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(ZookeeperBenchWorkerMain.class)
                    .args(zookeeper.connectString(), "/bench-z2", "worker-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            ContentionWindows windows = new ContentionWindows("zookeeper Z2/Z3", workers, directory);
            System.out.println("[bench] zookeeper Z2/Z3: warming up the workers (not counted)");
            for (String mode : List.of("fair", "unfair", "curator-mutex")) {
                windows.measure(mode, WARMUP_RUN_NANOS, new Contention(PROCESSES));
            }
            Contention fair = new Contention(PROCESSES);
            Contention unfair = new Contention(PROCESSES);
            Contention curator = new Contention(PROCESSES);
            for (String mode : List.of("fair", "curator-mutex", "unfair", "unfair", "curator-mutex", "fair")) {
                Contention into = switch (mode) {
                    case "fair" -> fair;
                    case "unfair" -> unfair;
                    default -> curator;
                };
                windows.measure(mode, WINDOW_NANOS, into);
            }
            table.add("Z2", "fair handoff, 4 processes: acquisitions", ResultTable.rate(fair.rate()),
                    "Curator InterProcessMutex " + ResultTable.rate(curator.rate()),
                    ResultTable.ratio(fair.rate() / curator.rate()), ">= InterProcessMutex",
                    fair.rate() >= curator.rate());
            table.info("Z2", "fair handoff gap; shares", ResultTable.latency(fair.gaps()),
                    "InterProcessMutex gap " + ResultTable.latency(curator.gaps()), fair.shares());
            table.info("Z2", "fair handoff vs the floor's serial rate", ResultTable.rate(fair.rate()),
                    "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(fair.rate() / floorRate));
            table.info("Z3", "unfair handoff, 4 processes: acquisitions", ResultTable.rate(unfair.rate()),
                    "Curator InterProcessMutex " + ResultTable.rate(curator.rate()),
                    ResultTable.ratio(unfair.rate() / curator.rate()));
            double leastShare = unfair.leastShare();
            table.add("Z3", "unfair: least-served process",
                    ResultTable.number("%.1f%% of acquisitions", 100 * leastShare),
                    "fair share 25% (" + unfair.shares() + ")", ResultTable.ratio(leastShare * PROCESSES),
                    ">= 0.50x fair share", leastShare * PROCESSES >= 0.5);
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }
}
