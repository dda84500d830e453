package io.github.distlock.etcd;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.PinnedThreadRecording;

/**
 * A JVM of JDK 21 or later in which virtual threads contend for an {@link EtcdLockRegistry}'s
 * locks while a {@link PinnedThreadRecording} records every {@code jdk.VirtualThreadPinned} event,
 * for {@link VirtualThreadPinningIntegrationTests}.
 *
 * <p>Arguments: {@code <endpoints, comma-separated> <namespace> <threads> <keys> <iterations>
 * <recording file>}. Thread {@code i} contends on key {@code i % keys}, fair or unfair by turns so
 * that every key has both, and each of its iterations uses one of {@code lock()},
 * {@code tryLock(timeout)} and {@code lockInterruptibly()} with an interrupt scheduled at a random
 * moment. Each key has its own {@link CriticalSectionChecker}.
 *
 * <p>A smaller unrecorded round runs first: the first threads through each code path load and
 * initialize classes, and a virtual thread that waits for another one to initialize a class pins
 * its carrier on every JDK, once per class, which says nothing about the locks. Then the recording
 * starts, and the recording's canary runs on a virtual thread: the pinned event it causes shows
 * that the recording sees pinning, and is counted apart from the others. Every other pinned event
 * counts, except those the recording tolerates.
 *
 * <p>Prints the recording's {@code PINNED} and {@code TOLERATED} lines, {@code ERROR <thread> <exception>}
 * for every unexpected failure of a contender, one {@code VIOLATION <key> <text>} per broken guarantee,
 * and finally {@code RESULT threads=<n> virtual=<n> finished=<n> acquired=<n> timedOut=<n>
 * storeCallTimedOut=<n> interrupted=<n> violations=<n>} followed by the recording's counts
 * ({@link PinnedThreadRecording.Summary#fields()}) about the recorded round; exits 0 once it got that far.
 */
public final class VirtualThreadContentionMain {

    private static final Duration TRY_LOCK_TIMEOUT = Duration.ofMillis(40);

    private static final long HOLD_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(150);

    private VirtualThreadContentionMain() {
    }

    public static void main(String[] args) throws Exception {
        List<String> endpoints = Arrays.asList(args[0].split(","));
        String namespace = args[1];
        int threads = Integer.parseInt(args[2]);
        int keys = Integer.parseInt(args[3]);
        int iterations = Integer.parseInt(args[4]);
        Path recordingFile = Path.of(args[5]);

        ThreadFactory virtualThreads = PinnedThreadRecording.virtualThreadFactory("contender-");
        PinnedThreadRecording recording;
        Outcome warmUp;
        Outcome outcome;
        try (Client client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
                EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
                    .namespace(namespace)
                    // Generous: the test is about pinning, and 200 contenders on a loaded 2-core machine
                    // once had etcd answer a write after more than the default 5 s request timeout.
                    .leaseTtl(Duration.ofSeconds(15))
                    .requestTimeout(Duration.ofSeconds(30))
                    .ownerIdentity("virtual-thread-contention")
                    .endpoints(endpoints)
                    .build()) {
            // Unrecorded: the first virtual threads through each path load and initialize classes, and
            // one that waits for another to finish that pins its carrier, once per class, on every JDK.
            warmUp = contend(registry, virtualThreads, Math.min(threads, 8 * keys), keys, 2);
            recording = PinnedThreadRecording.start();
            Thread canary = virtualThreads.newThread(PinnedThreadRecording::pinCanary);
            canary.start();
            canary.join();
            outcome = contend(registry, virtualThreads, threads, keys, iterations);
        }
        PinnedThreadRecording.Summary pinning = recording.stop(recordingFile, PinnedThreadRecording.everyEvent());
        for (Outcome run : List.of(warmUp, outcome)) {
            for (String error : run.errors) {
                System.out.println("ERROR " + error);
            }
            for (String violation : run.violations) {
                System.out.println("VIOLATION " + violation);
            }
        }
        System.out.println("RESULT threads=" + threads + " virtual=" + outcome.virtual + " finished="
                + outcome.finished + " acquired=" + outcome.acquired + " timedOut=" + outcome.timedOut
                + " storeCallTimedOut=" + outcome.storeCallTimedOut + " interrupted=" + outcome.interrupted
                + " violations=" + (warmUp.violations.size() + outcome.violations.size()) + " " + pinning.fields());
        System.out.flush();
        // jetcd's and gRPC's non-daemon threads may outlive the client briefly.
        System.exit(0);
    }

    private static Outcome contend(EtcdLockRegistry registry, ThreadFactory virtualThreads, int threads, int keys,
            int iterations) throws Exception {
        CriticalSectionChecker[] checkers = new CriticalSectionChecker[keys];
        AtomicInteger[] acquiredPerKey = new AtomicInteger[keys];
        for (int k = 0; k < keys; k++) {
            checkers[k] = new CriticalSectionChecker();
            acquiredPerKey[k] = new AtomicInteger();
        }
        AtomicInteger virtual = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger timedOut = new AtomicInteger();
        AtomicInteger storeCallTimedOut = new AtomicInteger();
        AtomicInteger interrupted = new AtomicInteger();
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
        List<Thread> contenders = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int key = t % keys;
                boolean fair = (t / keys) % 2 == 0;
                String name = "vt" + t + (fair ? "-fair" : "-unfair");
                FencedLock lock = registry.obtain("vt-key-" + key, fair);
                Runnable contender = () -> {
                    try {
                        if (PinnedThreadRecording.isVirtual(Thread.currentThread())) {
                            virtual.incrementAndGet();
                        }
                        for (int i = 0; i < iterations; i++) {
                            switch (ThreadLocalRandom.current().nextInt(3)) {
                                case 0 -> {
                                    lock.lock();
                                    holdAndRelease(lock, checkers[key], name, acquiredPerKey[key]);
                                }
                                case 1 -> tryLockWithTimeout(lock, checkers[key], name, acquiredPerKey[key],
                                        timedOut, storeCallTimedOut, interrupted);
                                default -> lockWithInterrupt(lock, checkers[key], name, acquiredPerKey[key],
                                        interrupter, interrupted);
                            }
                            // A late interrupt belongs to the attempt it was meant for.
                            Thread.interrupted();
                        }
                        finished.incrementAndGet();
                    }
                    catch (Throwable ex) {
                        errors.add(name + " " + ex);
                    }
                };
                Thread thread = virtualThreads.newThread(contender);
                contenders.add(thread);
            }
            contenders.forEach(Thread::start);
            long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
            for (Thread thread : contenders) {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (thread.isAlive()) {
                    errors.add(thread.getName() + " still running after " + RUN_TIMEOUT.toSeconds() + " s");
                }
            }
        }
        finally {
            interrupter.shutdownNow();
        }
        List<String> violations = new ArrayList<>();
        int acquired = 0;
        for (int k = 0; k < keys; k++) {
            int expected = acquiredPerKey[k].get();
            acquired += expected;
            for (String violation : checkers[k].check(expected).violations()) {
                violations.add("vt-key-" + k + " " + violation);
            }
        }
        return new Outcome(virtual.get(), finished.get(), acquired, timedOut.get(), storeCallTimedOut.get(),
                interrupted.get(), List.copyOf(errors), violations);
    }

    private static void tryLockWithTimeout(FencedLock lock, CriticalSectionChecker checker, String name,
            AtomicInteger acquired, AtomicInteger timedOut, AtomicInteger storeCallTimedOut,
            AtomicInteger interrupted) {
        try {
            if (lock.tryLock(TRY_LOCK_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)) {
                holdAndRelease(lock, checker, name, acquired);
            }
            else {
                timedOut.incrementAndGet();
            }
        }
        catch (LockAcquisitionException ex) {
            // The wait ran out while an etcd call of the acquisition was in flight: with this many
            // contenders on two cores a call can take longer than the whole budget.
            storeCallTimedOut.incrementAndGet();
        }
        catch (InterruptedException ex) {
            // An interrupt scheduled for an earlier lockInterruptibly() that landed late.
            interrupted.incrementAndGet();
        }
    }

    /**
     * Waits with {@code lockInterruptibly()} while an interrupt is on its way, due at a random
     * moment within a few milliseconds: either the lock or the interrupt wins.
     */
    private static void lockWithInterrupt(FencedLock lock, CriticalSectionChecker checker, String name,
            AtomicInteger acquired, ScheduledExecutorService interrupter, AtomicInteger interrupted) {
        Thread self = Thread.currentThread();
        ScheduledFuture<?> interrupt = interrupter.schedule(self::interrupt,
                ThreadLocalRandom.current().nextLong(TimeUnit.MILLISECONDS.toNanos(20)), TimeUnit.NANOSECONDS);
        boolean locked;
        try {
            lock.lockInterruptibly();
            locked = true;
        }
        catch (InterruptedException ex) {
            interrupted.incrementAndGet();
            locked = false;
        }
        finally {
            interrupt.cancel(false);
        }
        if (locked) {
            holdAndRelease(lock, checker, name, acquired);
        }
    }

    private static void holdAndRelease(FencedLock lock, CriticalSectionChecker checker, String name,
            AtomicInteger acquired) {
        try {
            long fence = lock.getFence();
            checker.enter("child", name, fence);
            // Parks (an interrupt only ends it early): another contender gets a chance to overlap, if it could.
            LockSupport.parkNanos(HOLD_NANOS);
            checker.exit("child", name, fence);
            acquired.incrementAndGet();
        }
        finally {
            lock.unlock();
        }
    }

    private record Outcome(int virtual, int finished, int acquired, int timedOut, int storeCallTimedOut,
            int interrupted, List<String> errors, List<String> violations) {
    }
}
