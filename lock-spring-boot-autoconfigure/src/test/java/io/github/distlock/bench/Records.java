package io.github.distlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.Lock;

/** Acquisitions that returned inside the measurement window; the rest is warm-up or wind-down. */
final class Records {

    /** When {@code lock()} was called, for loops that do not know it. */
    static final long UNKNOWN = Long.MIN_VALUE;

    private final long windowStart;

    private final long windowEnd;

    /** Three per acquisition: acquired, released, and when {@code lock()} was called ({@link #UNKNOWN} if not known). */
    private long[] times = new long[6144];

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
    void loop(Lock lock, long stopAt) {
        while (true) {
            long called = System.nanoTime();
            if (called >= stopAt) {
                return;
            }
            lock.lock();
            long acquired = System.nanoTime();
            long released = System.nanoTime();
            lock.unlock();
            add(called, acquired, released);
        }
    }

    void add(long acquired, long released) {
        add(UNKNOWN, acquired, released);
    }

    /** @param called when {@code lock()} was called, or {@link #UNKNOWN} */
    void add(long called, long acquired, long released) {
        if (acquired < this.windowStart || acquired >= this.windowEnd) {
            return;
        }
        if (3 * this.count + 3 > this.times.length) {
            this.times = Arrays.copyOf(this.times, this.times.length * 2);
        }
        this.times[3 * this.count] = acquired;
        this.times[3 * this.count + 1] = released;
        this.times[3 * this.count + 2] = called;
        this.count++;
    }

    /** Which lock a {@code LOOP} command's mode and key name. */
    @FunctionalInterface
    interface LockFor {

        Lock lock(String mode, String key);
    }

    /**
     * Serves {@code LOOP <run> <mode> <key> <window start> <window end> <stop at> <file> [threads]}
     * commands from stdin until it ends: loops on the lock until {@code stop at} (on {@code threads}
     * threads, one by default), writes the acquisitions inside the window to {@code file}
     * ({@code <acquired> <released> <lock() called>} per line) and prints {@code DONE <run> <count>}.
     */
    static void serveLoopCommands(LockFor locks) throws IOException {
        BufferedReader commands = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String command;
        while ((command = commands.readLine()) != null) {
            String[] words = command.trim().split(" ");
            if (!words[0].equals("LOOP") || (words.length != 8 && words.length != 9)) {
                throw new IllegalArgumentException("unknown command: " + command);
            }
            Lock lock = locks.lock(words[2], words[3]);
            int threads = (words.length == 9) ? Integer.parseInt(words[8]) : 1;
            List<Records> loops = new ArrayList<>();
            List<Thread> running = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Records records = new Records(Long.parseLong(words[4]), Long.parseLong(words[5]));
                loops.add(records);
                long stopAt = Long.parseLong(words[6]);
                Thread loop = new Thread(() -> records.loop(lock, stopAt), "loop-" + i);
                loop.start();
                running.add(loop);
            }
            for (Thread loop : running) {
                try {
                    loop.join();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while looping", ex);
                }
            }
            writeAll(loops, Path.of(words[7]));
            System.out.println("DONE " + words[1] + " " + loops.stream().mapToInt(records -> records.count).sum());
        }
    }

    void writeTo(Path file) throws IOException {
        writeAll(List.of(this), file);
    }

    /** Writes the acquisitions of several loops (threads of one process) to one file. */
    static void writeAll(List<Records> loops, Path file) throws IOException {
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(file))) {
            for (Records records : loops) {
                for (int i = 0; i < records.count; i++) {
                    long called = records.times[3 * i + 2];
                    out.println(records.times[3 * i] + " " + records.times[3 * i + 1]
                            + ((called == UNKNOWN) ? "" : " " + called));
                }
            }
        }
    }
}
