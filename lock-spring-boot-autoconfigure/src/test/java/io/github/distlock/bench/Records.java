package io.github.distlock.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** Acquisitions that returned inside the measurement window; the rest is warm-up or wind-down. */
final class Records {

    private final long windowStart;

    private final long windowEnd;

    private long[] times = new long[4096];

    int count;

    Records(long windowStart, long windowEnd) {
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
    }

    /**
     * Acquires and releases {@code lock} back to back with an empty critical section until
     * {@code stopAt}, recording every acquisition.
     * @param lock the lock
     * @param stopAt when to stop ({@link System#nanoTime()})
     */
    void loop(java.util.concurrent.locks.Lock lock, long stopAt) {
        while (System.nanoTime() < stopAt) {
            lock.lock();
            long acquired = System.nanoTime();
            long released = System.nanoTime();
            lock.unlock();
            add(acquired, released);
        }
    }

    void add(long acquired, long released) {
        if (acquired < this.windowStart || acquired >= this.windowEnd) {
            return;
        }
        if (2 * this.count + 2 > this.times.length) {
            this.times = Arrays.copyOf(this.times, this.times.length * 2);
        }
        this.times[2 * this.count] = acquired;
        this.times[2 * this.count + 1] = released;
        this.count++;
    }

    void writeTo(Path file) throws IOException {
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(file))) {
            for (int i = 0; i < this.count; i++) {
                out.println(this.times[2 * i] + " " + this.times[2 * i + 1]);
            }
        }
    }
}
