package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;

/**
 * Scenario 1: uncontended acquire and release of one key by one thread, unfair and fair, against
 * the raw floor on the same client. The three loops take turns in rounds, so that drift in etcd's
 * latency (disk, compaction, the other scenarios' leftovers) hits all of them alike.
 */
final class UncontendedScenario {

    private static final int WARMUP_CYCLES = 1_000;

    private static final int ROUNDS = 10;

    private static final int CYCLES_PER_ROUND = 500;

    private static final long FLOOR_LEASE_SECONDS = 120;

    private UncontendedScenario() {
    }

    /**
     * The raw floor as later scenarios compare with it.
     * @param cycles put-if-absent plus delete, serial
     * @param writes each of those two writes on its own
     */
    record Floor(Samples cycles, Samples writes) {
    }

    static Floor run(Client client, ResultTable table) throws Exception {
        long lease = client.getLeaseClient().grant(FLOOR_LEASE_SECONDS).get().getID();
        RawFloor floor = new RawFloor(client.getKVClient(), lease);
        ByteSequence floorKey = ByteSequence.from("/bench/s1-floor/uncontended", StandardCharsets.UTF_8);
        Samples floorCycles = new Samples();
        Samples writes = new Samples();
        Samples unfairCycles = new Samples();
        Samples fairCycles = new Samples();
        try (EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace("/bench/s1/")
            .ownerIdentity("bench-s1")
            .build()) {
            FencedLock unfair = registry.obtain("uncontended", false);
            FencedLock fair = registry.obtain("uncontended", true);
            for (int i = 0; i < WARMUP_CYCLES; i++) {
                floor.cycle(floorKey);
                cycle(unfair);
                cycle(fair);
            }
            for (int round = 0; round < ROUNDS; round++) {
                for (int turn = 0; turn < 3; turn++) {
                    switch ((round + turn) % 3) {
                        case 0 -> measureFloor(floor, floorKey, floorCycles, writes);
                        case 1 -> measure(unfair, unfairCycles);
                        default -> measure(fair, fairCycles);
                    }
                }
            }
        }
        finally {
            client.getLeaseClient().revoke(lease).get();
        }
        double unfairRatio = (double) unfairCycles.median() / floorCycles.median();
        double fairRatio = (double) fairCycles.median() / floorCycles.median();
        table.info("1", "raw floor: put-if-absent with lease + delete, serial",
                ResultTable.latency(floorCycles) + ", " + ResultTable.rate(floorCycles.serialRate()),
                "one etcd write: " + ResultTable.latency(writes), "");
        table.add("1", "uncontended lock()+unlock(), unfair", ResultTable.latency(unfairCycles),
                "floor " + ResultTable.latency(floorCycles), ResultTable.ratio(unfairRatio), "median <= 1.10x floor",
                unfairRatio <= 1.10);
        table.add("1", "uncontended lock()+unlock(), fair", ResultTable.latency(fairCycles),
                "floor " + ResultTable.latency(floorCycles), ResultTable.ratio(fairRatio), "median <= 1.15x floor",
                fairRatio <= 1.15);
        return new Floor(floorCycles, writes);
    }

    private static void cycle(FencedLock lock) {
        lock.lock();
        lock.unlock();
    }

    private static void measure(FencedLock lock, Samples cycles) {
        for (int i = 0; i < CYCLES_PER_ROUND; i++) {
            long start = System.nanoTime();
            cycle(lock);
            cycles.add(System.nanoTime() - start);
        }
    }

    private static void measureFloor(RawFloor floor, ByteSequence key, Samples cycles, Samples writes)
            throws Exception {
        for (int i = 0; i < CYCLES_PER_ROUND; i++) {
            long start = System.nanoTime();
            floor.putIfAbsent(key);
            long put = System.nanoTime();
            floor.delete(key);
            long end = System.nanoTime();
            cycles.add(end - start);
            writes.add(put - start);
            writes.add(end - put);
        }
    }
}
