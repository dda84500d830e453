package io.github.distlock.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.CriticalSectionChecker.Kind;

/**
 * A separate JVM that contends for locks on command, for the multi-process tests.
 *
 * <p>Arguments: {@code <store spec> <namespace> <key> <lease ttl seconds> <journal file> <name>}, the
 * store spec as {@link TestStore#open(String)} reads it.
 * Commands on stdin, one per line:
 * <ul>
 * <li>{@code LOOP <threads> <iterations> <fair|unfair|mixed> <hold millis>}: contend, journaling
 * every entry and exit, then print {@code DONE <acquisitions>};</li>
 * <li>{@code ACQUIRE <label>}: a new thread takes the fair lock, journals entry and exit as thread
 * {@code <label>}, releases;</li>
 * <li>{@code HOLD}: take the lock and keep it, printing {@code HOLDING <fence>}.</li>
 * </ul>
 * The journal ({@link CriticalSectionChecker#parseLine} reads its lines) is appended with one {@code write} per line to a file opened in append mode, so lines
 * of all processes land whole and in the order they were written. A shutdown hook closes the
 * registry, as a Spring context would on SIGTERM.
 */
public final class LockWorkerMain {

    private LockWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        String namespace = args[1];
        String key = args[2];
        Duration ttl = Duration.ofSeconds(Long.parseLong(args[3]));
        Path journal = Path.of(args[4]);
        String name = args[5];
        TestStore store = TestStore.open(args[0]);
        LockRegistry registry = store.registry(namespace, ttl, name);
        TestStore.warmUp(registry, key + "-warm-up-" + name);
        Runtime.getRuntime().addShutdownHook(new Thread(store::close));
        try (OutputStream out = Files.newOutputStream(journal, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            Journal log = new Journal(out, name);
            System.out.println("READY " + name);
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String command;
            while ((command = commands.readLine()) != null) {
                String[] words = command.trim().split(" ");
                switch (words[0]) {
                    case "LOOP" -> loop(registry, key, log, Integer.parseInt(words[1]), Integer.parseInt(words[2]),
                            words[3], Long.parseLong(words[4]));
                    case "ACQUIRE" -> acquireOnce(registry.obtain(key, true), log, words[1]);
                    case "HOLD" -> {
                        FencedLock lock = registry.obtain(key, true);
                        lock.lock();
                        System.out.println("HOLDING " + lock.getFence());
                    }
                    default -> System.out.println("UNKNOWN " + command);
                }
            }
        }
    }

    private static void loop(LockRegistry registry, String key, Journal log, int threads, int iterations,
            String mode, long holdMillis) throws InterruptedException {
        AtomicInteger acquisitions = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            boolean fair = mode.equals("fair") || (mode.equals("mixed") && t % 2 == 0);
            FencedLock lock = registry.obtain(key, fair);
            String thread = "t" + t;
            Thread worker = new Thread(() -> {
                for (int i = 0; i < iterations; i++) {
                    lock.lock();
                    try {
                        log.write(Kind.ENTER, thread, lock.getFence());
                        TimeUnit.MILLISECONDS.sleep(holdMillis);
                        log.write(Kind.EXIT, thread, lock.getFence());
                        acquisitions.incrementAndGet();
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    finally {
                        lock.unlock();
                    }
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        System.out.println("DONE " + acquisitions.get());
    }

    private static void acquireOnce(FencedLock lock, Journal log, String label) {
        Thread thread = new Thread(() -> {
            lock.lock();
            try {
                log.write(Kind.ENTER, label, lock.getFence());
                log.write(Kind.EXIT, label, lock.getFence());
                System.out.println("ACQUIRED " + label + " " + lock.getFence());
            }
            finally {
                lock.unlock();
            }
        });
        thread.start();
    }

    /** Appends whole lines; each line is one write to an append-mode file. */
    private static final class Journal {

        private final OutputStream out;

        private final String process;

        Journal(OutputStream out, String process) {
            this.out = out;
            this.process = process;
        }

        synchronized void write(Kind kind, String thread, long fence) {
            String line = CriticalSectionChecker.journalLine(kind, this.process, thread, fence,
                    System.currentTimeMillis(), true);
            try {
                this.out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                this.out.flush();
            }
            catch (IOException ex) {
                throw new IllegalStateException("journal write failed", ex);
            }
        }
    }
}
