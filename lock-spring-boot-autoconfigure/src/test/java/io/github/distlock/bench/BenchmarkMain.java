package io.github.distlock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.testsupport.EtcdCluster;

/**
 * Runs every benchmark scenario against one etcd member that it starts itself, and prints one
 * table: each measurement next to the raw etcd floor (or reference) measured in the same run, and
 * PASS or MISS against its target. A MISS is a finding, not a failure: the exit code is non-zero
 * only when the harness itself fails.
 *
 * <p>Run with {@code mvn -B -q -Pbenchmarks -pl lock-spring-boot-autoconfigure -am verify}; add
 * {@code -Dbench.store=redis} for the Redis benchmarks ({@link RedisBenchmark}) or
 * {@code -Dbench.store=zookeeper} for the ZooKeeper ones ({@link ZookeeperBenchmark}) or
 * {@code -Dbench.store=jdbc} for the JDBC ones ({@link JdbcBenchmark}) instead.
 */
public final class BenchmarkMain {

    private static final ByteSequence COMPACTION_MARK = ByteSequence.from("/bench/compacted",
            StandardCharsets.UTF_8);

    private BenchmarkMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("redis")) {
            redis(args.length > 1 && args[1].equals("hot"));
            return;
        }
        if (args.length > 0 && args[0].equals("zookeeper")) {
            zookeeper();
            return;
        }
        if (args.length > 0 && args[0].equals("jdbc")) {
            jdbc();
            return;
        }
        if (args.length > 0 && !args[0].equals("etcd")) {
            throw new IllegalArgumentException("Unknown store '" + args[0] + "': etcd, redis, zookeeper or jdbc");
        }
        long started = System.nanoTime();
        // Other work on the machine skews every number; the load average tells the reader whether there was any.
        String loadAtStart = loadAverage();
        ResultTable table = new ResultTable();
        String etcdVersion;
        System.out.println("[bench] starting etcd");
        try (EtcdCluster etcd = EtcdCluster.single(); Client client = etcd.newClient()) {
            etcdVersion = client.getMaintenanceClient().statusMember(etcd.clientEndpoint()).get().getVersion();
            System.out.println("[bench] scenario 1: uncontended acquire+release");
            UncontendedScenario.Floor floor = UncontendedScenario.run(client, table);
            // A second argument runs only the floor and some scenarios: "handoff" (2, 3), "hot" (8, 9) or "app" (10).
            String only = (args.length > 1) ? args[1] : "all";
            boolean all = only.equals("all");
            if (all || only.equals("handoff")) {
                HandoffScenario.run(etcd, client, floor, table);
            }
            if (all || only.equals("hot")) {
                HotKeyScenario.run(etcd, client, floor, table);
                LingerScenario.run(etcd, client, floor, table);
            }
            if (all || only.equals("app")) {
                AppHandoffScenario.run(etcd, table);
            }
            if (all) {
                ManyKeysScenario.run(client, table);
                AnnotationOverheadScenario.run(table);
                compact(client);
                ResourcesScenario.run(client, table);
                compact(client);
                CrashRecoveryScenario.run(etcd, client, table);
            }
        }
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "distlock benchmarks: %d cores%s, %s %s, etcd %s (one member, "
                + "loopback); run took %.0f s; load average %s at start, %s at end",
                Runtime.getRuntime().availableProcessors(), cpuModel(), System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"), etcdVersion, (System.nanoTime() - started) / 1e9,
                loadAtStart, loadAverage()));
        table.print(System.out);
    }

    /** The Redis benchmarks ({@link RedisBenchmark}) and their table. */
    private static void redis(boolean hotKeyOnly) throws Exception {
        long started = System.nanoTime();
        String loadAtStart = loadAverage();
        ResultTable table = new ResultTable();
        String version = RedisBenchmark.run(table, hotKeyOnly);
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "distlock Redis benchmarks: %d cores%s, %s %s, redis-server %s "
                + "(no persistence, loopback), Redisson %s; run took %.0f s; load average %s at start, %s at end",
                Runtime.getRuntime().availableProcessors(), cpuModel(), System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"), version, org.redisson.Version.class.getPackage()
                    .getImplementationVersion(), (System.nanoTime() - started) / 1e9, loadAtStart, loadAverage()));
        table.print(System.out);
    }

    /** The ZooKeeper benchmarks ({@link ZookeeperBenchmark}) and their table. */
    private static void zookeeper() throws Exception {
        long started = System.nanoTime();
        String loadAtStart = loadAverage();
        ResultTable table = new ResultTable();
        String version = ZookeeperBenchmark.run(table);
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "distlock ZooKeeper benchmarks: %d cores%s, %s %s, ZooKeeper %s "
                + "(standalone, loopback, fsync on), Curator %s; run took %.0f s; load average %s at start, %s at end",
                Runtime.getRuntime().availableProcessors(), cpuModel(), System.getProperty("java.vm.name"),
                System.getProperty("java.runtime.version"), version,
                org.apache.curator.framework.CuratorFramework.class.getPackage().getImplementationVersion(),
                (System.nanoTime() - started) / 1e9, loadAtStart, loadAverage()));
        table.print(System.out);
    }

    /** The JDBC benchmarks ({@link JdbcBenchmark}) and their table. */
    private static void jdbc() throws Exception {
        long started = System.nanoTime();
        String loadAtStart = loadAverage();
        ResultTable table = new ResultTable();
        String databases = JdbcBenchmark.run(table);
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "distlock JDBC benchmarks: %d cores%s, %s %s, %s (private "
                + "servers, loopback), HikariCP pools of 10, Spring Integration %s; run took %.0f s; load average %s at "
                + "start, %s at end", Runtime.getRuntime().availableProcessors(), cpuModel(),
                System.getProperty("java.vm.name"), System.getProperty("java.runtime.version"), databases,
                org.springframework.integration.jdbc.lock.JdbcLockRegistry.class.getPackage().getImplementationVersion(),
                (System.nanoTime() - started) / 1e9, loadAtStart, loadAverage()));
        table.print(System.out);
    }

    /**
     * Compacts etcd's history up to now, as etcd's periodic auto-compaction would. Every scenario
     * (and every contention window) starts from a compacted keyspace: until then, each deleted
     * lock entry stays in etcd's index and range reads over its lock's queue step over it, so
     * without this a scenario would pay for the acquisitions of the ones before it.
     */
    static void compact(Client client) throws Exception {
        // A write first: compacting at a revision that is already compacted fails.
        long revision = client.getKVClient().put(COMPACTION_MARK, COMPACTION_MARK).get().getHeader().getRevision();
        client.getKVClient().compact(revision).get();
    }

    private static String loadAverage() throws IOException {
        Path loadAvg = Path.of("/proc/loadavg");
        return Files.isReadable(loadAvg) ? Files.readString(loadAvg).split(" ")[0] : "unknown";
    }

    private static String cpuModel() throws IOException {
        Path cpuInfo = Path.of("/proc/cpuinfo");
        if (!Files.isReadable(cpuInfo)) {
            return "";
        }
        Optional<String> model = Files.readAllLines(cpuInfo).stream()
            .filter(line -> line.startsWith("model name"))
            .map(line -> line.substring(line.indexOf(':') + 1).trim())
            .findFirst();
        return model.map(name -> " (" + name + ")").orElse("");
    }
}
