package io.github.distlock.bench;

import java.util.List;
import java.util.concurrent.locks.Lock;

/**
 * One thread's uncontended lock()+unlock() cycles of several locks and a store's raw floor, taking
 * turns in rounds (each round starting with another loop) so that drift hits all alike.
 */
final class UncontendedRounds {

    /** One cycle of the raw floor: acquire and release without the product. */
    @FunctionalInterface
    interface FloorCycle {

        void run() throws Exception;
    }

    private UncontendedRounds() {
    }

    /**
     * Warms every loop up for {@code warmupCycles}, then records each cycle's time.
     * @param floorCycle the raw floor's cycle, recorded into {@code floor}
     * @param locks the locks, each recorded into the {@code samples} at its index
     */
    static void measure(FloorCycle floorCycle, Samples floor, List<Lock> locks, List<Samples> samples,
            int warmupCycles, int rounds, int cyclesPerRound) throws Exception {
        for (int i = 0; i < warmupCycles; i++) {
            floorCycle.run();
            for (Lock lock : locks) {
                lock.lock();
                lock.unlock();
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int turn = 0; turn <= locks.size(); turn++) {
                int which = (round + turn) % (locks.size() + 1);
                for (int i = 0; i < cyclesPerRound; i++) {
                    long start = System.nanoTime();
                    if (which == locks.size()) {
                        floorCycle.run();
                        floor.add(System.nanoTime() - start);
                    }
                    else {
                        locks.get(which).lock();
                        locks.get(which).unlock();
                        samples.get(which).add(System.nanoTime() - start);
                    }
                }
            }
        }
    }
}
