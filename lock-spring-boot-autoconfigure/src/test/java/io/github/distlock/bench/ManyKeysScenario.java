package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;

/**
 * Scenario 4: 32 threads, each acquiring and releasing its own key through one shared registry,
 * against 32 threads running the raw floor on one shared client. Phases alternate (floor,
 * registry, registry, floor) so that drift does not favour either; each starts from a compacted
 * keyspace, so the registry's second phase does not pay for the first one's deleted entries.
 */
final class ManyKeysScenario {

    private static final int THREADS = 32;

    private static final long WARMUP_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long FLOOR_LEASE_SECONDS = 120;

    private ManyKeysScenario() {
    }

    /** One thread's acquire-and-release. */
    @FunctionalInterface
    private interface Cycle {

        void run() throws Exception;
    }

    static void run(Client client, ResultTable table) throws Exception {
        long lease = client.getLeaseClient().grant(FLOOR_LEASE_SECONDS).get().getID();
        RawFloor floor = new RawFloor(client.getKVClient(), lease);
        Phases floorPhases = new Phases();
        Phases registryPhases = new Phases();
        try (EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace("/bench/s4/")
            .ownerIdentity("bench-s4")
            .build()) {
            IntFunction<Cycle> floorCycle = thread -> {
                ByteSequence key = ByteSequence.from("/bench/s4-floor/key-" + thread, StandardCharsets.UTF_8);
                return () -> floor.cycle(key);
            };
            IntFunction<Cycle> registryCycle = thread -> {
                FencedLock lock = registry.obtain("key-" + thread);
                return () -> {
                    lock.lock();
                    lock.unlock();
                };
            };
            runPhase(client, "raw floor", floorCycle, floorPhases);
            runPhase(client, "registry", registryCycle, registryPhases);
            runPhase(client, "registry", registryCycle, registryPhases);
            runPhase(client, "raw floor", floorCycle, floorPhases);
        }
        finally {
            client.getLeaseClient().revoke(lease).get();
        }
        double ratio = registryPhases.rate() / floorPhases.rate();
        table.add("4", "32 threads, own key each, one registry", ResultTable.rate(registryPhases.rate()) + ", "
                + ResultTable.latency(registryPhases.cycles), "raw floor on one client "
                + ResultTable.rate(floorPhases.rate()) + ", " + ResultTable.latency(floorPhases.cycles),
                ResultTable.ratio(ratio), ">= 0.80x floor", ratio >= 0.8);
    }

    private static void runPhase(Client client, String name, IntFunction<Cycle> cycles, Phases into)
            throws Exception {
        System.out.println("[bench] scenario 4: " + name + ", " + THREADS + " threads");
        BenchmarkMain.compact(client);
        long windowStart = System.nanoTime() + WARMUP_NANOS;
        long windowEnd = windowStart + WINDOW_NANOS;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Samples> perThread = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            Cycle cycle = cycles.apply(i);
            Samples samples = new Samples();
            perThread.add(samples);
            Thread thread = new Thread(() -> {
                try {
                    long end;
                    do {
                        long start = System.nanoTime();
                        cycle.run();
                        end = System.nanoTime();
                        if (end >= windowStart && end < windowEnd) {
                            samples.add(end - start);
                        }
                    }
                    while (end < windowEnd);
                }
                catch (Throwable ex) {
                    failure.compareAndSet(null, ex);
                }
            }, "bench-s4-" + i);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("scenario 4 (" + name + ") failed", failure.get());
        }
        perThread.forEach(into.cycles::addAll);
        into.windowNanos += WINDOW_NANOS;
    }

    /** Cycles completed inside the windows of one contender type. */
    private static final class Phases {

        private final Samples cycles = new Samples();

        private long windowNanos;

        double rate() {
            return this.cycles.count() / (this.windowNanos / 1e9);
        }
    }
}
