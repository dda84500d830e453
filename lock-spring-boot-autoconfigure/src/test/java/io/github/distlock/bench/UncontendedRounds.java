package io.github.distlock.bench;

import java.util.List;
import java.util.concurrent.locks.Lock;

/**
 * One thread's uncontended lock()+unlock() cycles of several locks and a store's raw floor, taking
 * turns in rounds (each round starting with another loop) so that drift hits all alike.
 */
final class UncontendedRounds {

    /** One acquire and release, by the product, a peer or the raw floor. */
    @FunctionalInterface
    interface Cycle {

        void run() throws Exception;

        static Cycle of(Lock lock) {
            return () -> {
                lock.lock();
                lock.unlock();
            };
        }
    }

    private UncontendedRounds() {
    }

    /**
     * Warms every loop up for {@code warmupCycles}, then records each cycle's time.
     * @param floorCycle the raw floor's cycle, recorded into {@code floor}
     * @param locks the locks, each recorded into the {@code samples} at its index
     */
    static void measure(Cycle floorCycle, Samples floor, List<Lock> locks, List<Samples> samples,
            int warmupCycles, int rounds, int cyclesPerRound) throws Exception {
        measureCycles(floorCycle, floor, locks.stream().map(Cycle::of).toList(), samples, warmupCycles, rounds,
                cyclesPerRound);
    }

    /** As {@link #measure}, for any cycles: each recorded into the {@code samples} at its index. */
    static void measureCycles(Cycle floorCycle, Samples floor, List<Cycle> cycles, List<Samples> samples,
            int warmupCycles, int rounds, int cyclesPerRound) throws Exception {
        for (int i = 0; i < warmupCycles; i++) {
            floorCycle.run();
            for (Cycle cycle : cycles) {
                cycle.run();
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int turn = 0; turn <= cycles.size(); turn++) {
                int which = (round + turn) % (cycles.size() + 1);
                for (int i = 0; i < cyclesPerRound; i++) {
                    long start = System.nanoTime();
                    if (which == cycles.size()) {
                        floorCycle.run();
                        floor.add(System.nanoTime() - start);
                    }
                    else {
                        cycles.get(which).run();
                        samples.get(which).add(System.nanoTime() - start);
                    }
                }
            }
        }
    }
}
