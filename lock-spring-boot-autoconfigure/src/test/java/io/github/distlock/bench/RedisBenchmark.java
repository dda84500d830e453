package io.github.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import io.github.distlock.LocalHandoff;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The Redis benchmarks, on a redis-server of their own (no persistence, loopback), each
 * measurement beside the raw Redis floor and Redisson measured in the same run:
 * <ul>
 * <li>R1, uncontended acquire and release by one thread: the registry (unfair and fair), the raw
 * floor ({@code SET NX PX} plus a compare-and-delete script, the textbook Redis lock) and
 * Redisson's {@code RLock} and {@code RFairLock}, taking turns in rounds so drift hits all alike;</li>
 * <li>R2 and R3, four processes looping on one key with an empty critical section: fair against
 * {@code RFairLock}, unfair against {@code RLock}, runs alternating;</li>
 * <li>R4, one hot key, four processes of eight threads, unfair, against {@code RLock};</li>
 * <li>R5, one thread re-acquiring an unfair lock with a linger, which no other process wants:
 * the scripts Redis ran (every lock operation is one), and the time, against the floor.</li>
 * </ul>
 */
final class RedisBenchmark {

    private static final int WARMUP_CYCLES = 2_000;

    private static final int ROUNDS = 10;

    private static final int CYCLES_PER_ROUND = 1_000;

    private static final int PROCESSES = 4;

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(4);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    private RedisBenchmark() {
    }

    /** @return the Redis server version, for the table's heading */
    static String run(ResultTable table, boolean hotKeyOnly) throws Exception {
        try (RedisServer redis = RedisServer.start(false)) {
            String version = redis.command("INFO", "server").lines()
                .filter(line -> line.startsWith("redis_version:"))
                .map(line -> line.substring("redis_version:".length()).trim())
                .findFirst()
                .orElse("unknown");
            System.out.println("[bench] redis R1: uncontended acquire+release");
            double floorRate = uncontended(redis, table);
            handoffs(redis, floorRate, table, hotKeyOnly);
            return version;
        }
    }

    private static double uncontended(RedisServer redis, ResultTable table) throws Exception {
        RedisClient client = RedisClient.create(redis.uri());
        Config config = new Config();
        config.useSingleServer().setAddress(redis.uri());
        RedissonClient redisson = Redisson.create(config);
        Samples floor = new Samples();
        Samples unfair = new Samples();
        Samples fair = new Samples();
        Samples redissonLock = new Samples();
        Samples redissonFair = new Samples();
        Lingered reacquired;
        try (StatefulRedisConnection<String, String> connection = client.connect();
                RedisLockRegistry registry = RedisLockRegistry.builder(client).namespace("bench-r1:")
                    .ownerIdentity("bench-r1").build()) {
            RedisCommands<String, String> raw = connection.sync();
            List<Lock> locks = List.of(registry.obtain("uncontended", false), registry.obtain("uncontended", true),
                    redisson.getLock("bench-r1-redisson"), redisson.getFairLock("bench-r1-redisson-fair"));
            List<Samples> samples = List.of(unfair, fair, redissonLock, redissonFair);
            UncontendedRounds.measure(() -> floorCycle(raw), floor, locks, samples, WARMUP_CYCLES, ROUNDS, CYCLES_PER_ROUND);
            System.out.println("[bench] redis R5: re-acquire with linger");
            reacquired = linger(client, raw);
        }
        finally {
            redisson.shutdown();
            client.shutdown();
        }
        table.info("R1", "raw Redis floor: SET NX PX + compare-and-delete script, serial",
                ResultTable.latency(floor) + ", " + ResultTable.rate(floor.serialRate()), "", "");
        addUncontended(table, "unfair", unfair, floor);
        addUncontended(table, "fair", fair, floor);
        table.info("R1", "Redisson RLock lock()+unlock() (reference)", ResultTable.latency(redissonLock),
                "floor " + ResultTable.latency(floor),
                ResultTable.ratio((double) redissonLock.median() / floor.median()));
        table.info("R1", "Redisson RFairLock lock()+unlock() (reference)", ResultTable.latency(redissonFair),
                "floor " + ResultTable.latency(floor),
                ResultTable.ratio((double) redissonFair.median() / floor.median()));
        addLinger(table, reacquired, floor);
        return floor.serialRate();
    }

    /** R5's measurements: the cycles' times, and the scripts Redis ran meanwhile (every lock operation is one). */
    private record Lingered(Samples cycles, long commands) {
    }

    private static Lingered linger(RedisClient client, RedisCommands<String, String> raw) {
        Samples lingering = new Samples();
        long commands;
        try (RedisLockRegistry registry = RedisLockRegistry.builder(client).namespace("bench-r5:")
            .ownerIdentity("bench-r5").localHandoff(new LocalHandoff(LocalHandoff.DEFAULT.window(),
                    Duration.ofMillis(100))).build()) {
            Lock lock = registry.obtain("again", false);
            for (int i = 0; i < LingerScenario.WARMUP_CYCLES; i++) {
                LingerScenario.cycle(lock, null);
            }
            long before = scriptCalls(raw);
            for (int i = 0; i < LingerScenario.CYCLES; i++) {
                LingerScenario.cycle(lock, lingering);
            }
            commands = scriptCalls(raw) - before;
        }
        return new Lingered(lingering, commands);
    }

    private static void addLinger(ResultTable table, Lingered reacquired, Samples floor) {
        LingerScenario.addTimes(table, "R5", reacquired.cycles(), "floor " + ResultTable.latency(floor), floor);
        long commands = reacquired.commands();
        table.add("R5", "re-acquire with linger: Redis script calls in " + LingerScenario.CYCLES + " cycles",
                Long.toString(commands), LingerScenario.storeAcquisitions(),
                ResultTable.number("%.4f per cycle", (double) commands / LingerScenario.CYCLES),
                LingerScenario.CALL_TARGET, commands <= LingerScenario.callBound());
    }

    /**
     * @return the EVALSHA and EVAL calls Redis served so far: every lock operation of the registry is
     * one (total_commands_processed would count the commands inside the scripts too)
     */
    private static long scriptCalls(RedisCommands<String, String> raw) {
        return raw.info("commandstats").lines()
            .filter(line -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
            .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + "calls=".length(),
                    line.indexOf(','))))
            .sum();
    }

    private static void addUncontended(ResultTable table, String mode, Samples measured, Samples floor) {
        double ratio = (double) measured.median() / floor.median();
        table.add("R1", "uncontended lock()+unlock(), " + mode, ResultTable.latency(measured),
                "floor " + ResultTable.latency(floor), ResultTable.ratio(ratio), "median <= 1.30x floor",
                ratio <= 1.30);
    }

    private static void floorCycle(RedisCommands<String, String> raw) {
        if (!"OK".equals(raw.set("bench-r1-floor", "owner-token", SetArgs.Builder.nx().px(30_000)))) {
            throw new IllegalStateException("raw floor key already exists");
        }
        Long deleted = raw.eval(COMPARE_AND_DELETE, ScriptOutputType.INTEGER, new String[] { "bench-r1-floor" },
                "owner-token");
        if (deleted != 1L) {
            throw new IllegalStateException("raw floor key was not deleted");
        }
    }

    /**
     * R4: one hot key, 4 processes x 8 threads, unfair, empty section: the registry (local handoffs
     * on, their window counted from each store acquisition since Redis does not report waiters)
     * against Redisson's {@code RLock} on the same workers.
     */
    private static void hotKey(ContentionWindows windows, double floorRate, ResultTable table) throws Exception {
        int threads = 8;
        Contention unfair = new Contention(PROCESSES);
        Contention redissonLock = new Contention(PROCESSES);
        windows.measure("unfair", threads, WARMUP_RUN_NANOS, new Contention(PROCESSES));
        windows.measure("redisson-lock", threads, WARMUP_RUN_NANOS, new Contention(PROCESSES));
        for (String mode : List.of("unfair", "redisson-lock", "redisson-lock", "unfair")) {
            windows.measure(mode, threads, WINDOW_NANOS, mode.equals("unfair") ? unfair : redissonLock);
        }
        table.add("R4", "hot key, 4 processes x 8 threads, unfair: acquisitions", ResultTable.rate(unfair.rate()),
                "Redisson RLock " + ResultTable.rate(redissonLock.rate()),
                ResultTable.ratio(unfair.rate() / redissonLock.rate()), ">= RLock", unfair.rate() >= redissonLock.rate());
        table.add("R4", "hot key vs the floor's serial rate", ResultTable.rate(unfair.rate()),
                "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(unfair.rate() / floorRate),
                ">= 5x floor", unfair.rate() >= 5 * floorRate);
        table.add("R4", "hot key: least-served process", ResultTable.number("%.1f%% of acquisitions",
                100 * unfair.leastShare()), "fair share 25% (" + unfair.shares() + "); RLock " + redissonLock.shares(),
                ResultTable.ratio(unfair.leastShare() * PROCESSES), ">= 0.50x fair share",
                unfair.leastShare() * PROCESSES >= 0.5);
        table.info("R4", "hot key: wait in lock(), p99.9 / max", ResultTable.latency(unfair.waits()) + ", p99.9 "
                + ResultTable.millis(unfair.waits().percentile(0.999)) + ", max "
                + ResultTable.millis(unfair.waits().percentile(1.0)), "RLock " + ResultTable.latency(redissonLock.waits())
                + ", max " + ResultTable.millis(redissonLock.waits().percentile(1.0)), "");
    }

    private static void handoffs(RedisServer redis, double floorRate, ResultTable table, boolean hotKeyOnly)
            throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-redis-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(RedisBenchWorkerMain.class)
                    .args(redis.uri(), "bench-r2:", "10000", "worker-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            ContentionWindows windows = new ContentionWindows("redis R2/R3", workers, directory);
            if (hotKeyOnly) {
                hotKey(windows, floorRate, table);
                return;
            }
            System.out.println("[bench] redis R2/R3: warming up the workers (not counted)");
            for (String mode : List.of("fair", "unfair", "redisson-lock", "redisson-fair")) {
                windows.measure(mode, WARMUP_RUN_NANOS, new Contention(PROCESSES));
            }
            Contention fair = new Contention(PROCESSES);
            Contention unfair = new Contention(PROCESSES);
            Contention redissonFair = new Contention(PROCESSES);
            Contention redissonLock = new Contention(PROCESSES);
            for (String mode : List.of("fair", "redisson-fair", "unfair", "redisson-lock", "redisson-lock", "unfair",
                    "redisson-fair", "fair")) {
                Contention into = switch (mode) {
                    case "fair" -> fair;
                    case "unfair" -> unfair;
                    case "redisson-fair" -> redissonFair;
                    default -> redissonLock;
                };
                windows.measure(mode, WINDOW_NANOS, into);
            }
            table.add("R2", "fair handoff, 4 processes: acquisitions", ResultTable.rate(fair.rate()),
                    "Redisson RFairLock " + ResultTable.rate(redissonFair.rate()),
                    ResultTable.ratio(fair.rate() / redissonFair.rate()), ">= RFairLock", fair.rate() >= redissonFair.rate());
            table.info("R2", "fair handoff gap; shares", ResultTable.latency(fair.gaps()),
                    "RFairLock gap " + ResultTable.latency(redissonFair.gaps()), fair.shares());
            table.info("R2", "fair handoff vs the floor's serial rate", ResultTable.rate(fair.rate()),
                    "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(fair.rate() / floorRate));
            table.add("R3", "unfair handoff, 4 processes: acquisitions", ResultTable.rate(unfair.rate()),
                    "Redisson RLock " + ResultTable.rate(redissonLock.rate()),
                    ResultTable.ratio(unfair.rate() / redissonLock.rate()), ">= RLock",
                    unfair.rate() >= redissonLock.rate());
            double leastShare = unfair.leastShare();
            table.add("R3", "unfair: least-served process",
                    ResultTable.number("%.1f%% of acquisitions", 100 * leastShare),
                    "fair share 25% (" + unfair.shares() + ")", ResultTable.ratio(leastShare * PROCESSES),
                    ">= 0.50x fair share", leastShare * PROCESSES >= 0.5);
            hotKey(windows, floorRate, table);
            table.info("R3", "Redisson RLock: least-served process; gap",
                    ResultTable.number("%.1f%% (%s)", 100 * redissonLock.leastShare(), redissonLock.shares()),
                    ResultTable.latency(redissonLock.gaps()), "unfair gap " + ResultTable.latency(unfair.gaps()));
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }
}
