package io.github.distlock.autoconfigure.contending;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import org.springframework.beans.factory.annotation.Value;

/**
 * Locked methods that all use the key {@code contended}, and a critical section that detects
 * overlaps through files shared by every process: an {@code occupied} marker created exclusively
 * on entry and deleted on exit, a {@code counter} incremented by read-modify-write, and a
 * {@code log} with one line per entry: process id and fence.
 */
public class Worker {

    /** Widens the window in which a broken lock would let two processes in at once. */
    private static final long DWELL_NANOS = Duration.ofMillis(2).toNanos();

    private final String id;

    private final Path directory;

    public Worker(@Value("${contend.id}") String id, @Value("${contend.dir}") Path directory) {
        this.id = id;
        this.directory = directory;
    }

    @DistributedLock(key = "'contended'", waitTimeout = "60s")
    public void work() throws IOException {
        enter();
        LockSupport.parkNanos(DWELL_NANOS);
        leave();
    }

    @DistributedLock(key = "'contended'", fair = true, waitTimeout = "60s")
    public void workFairly() throws IOException {
        enter();
        LockSupport.parkNanos(DWELL_NANOS);
        leave();
    }

    @DistributedLock(key = "'contended'", fair = true, waitTimeout = "60s")
    public void hold(CountDownLatch release) throws IOException, InterruptedException {
        enter();
        System.out.println("HOLDING " + LockContext.currentFence());
        release.await();
        leave();
    }

    private void enter() throws IOException {
        long fence = LockContext.currentFence();
        try {
            Files.createFile(this.directory.resolve("occupied"));
        }
        catch (FileAlreadyExistsException ex) {
            System.out.println("OVERLAP " + this.id + " fence " + fence);
        }
        Files.writeString(this.directory.resolve("log"), this.id + " " + fence + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        Path counter = this.directory.resolve("counter");
        long count = Files.exists(counter) ? Long.parseLong(Files.readString(counter).trim()) : 0;
        Files.writeString(counter, Long.toString(count + 1));
    }

    private void leave() throws IOException {
        Files.deleteIfExists(this.directory.resolve("occupied"));
    }
}
