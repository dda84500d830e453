package io.github.distlock;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.CriticalSectionChecker.Event;
import io.github.distlock.testsupport.CriticalSectionChecker.Kind;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.LockWorkerMain;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Guarantees across separate JVMs sharing one store: mutual exclusion (G1), arrival order of fair
 * waiters (G2), increasing fences (G3) and release after a crash or a clean shutdown (G4). Worker
 * JVMs ({@link LockWorkerMain}) open the store the subclass names.
 */
@FaultInjectionTest
public abstract class AbstractMultiProcessLockTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    @TempDir
    Path tempDir;

    private final List<JvmProcess> workers = new ArrayList<>();

    private String namespace;

    private Path journal;

    private TestStore store;

    /** @return a new view of the store under test, with its own client; the caller closes it */
    protected abstract TestStore openStore();

    @BeforeEach
    void setUp() {
        this.store = openStore();
        this.namespace = this.store.namespace("mp-" + UUID.randomUUID());
        this.journal = this.tempDir.resolve("journal.txt");
    }

    @AfterEach
    void tearDown() {
        this.workers.forEach(JvmProcess::close);
        this.store.close();
    }

    @ParameterizedTest
    @ValueSource(strings = { "fair", "unfair", "mixed" })
    void threeProcessesNeverHoldTheLockTogether(String mode) throws Exception {
        int threads = 2;
        int iterations = 15;
        List<JvmProcess> processes = startWorkers(3, "contended", 10);
        for (JvmProcess process : processes) {
            process.sendLine("LOOP " + threads + " " + iterations + " " + mode + " 2");
        }
        for (JvmProcess process : processes) {
            assertThat(process.awaitLine(line -> line.startsWith("DONE"), LONG)).isEqualTo("DONE " + threads * iterations);
        }
        journal().check(3 * threads * iterations).assertNoViolations();
    }

    @Test
    void fairWaitersOfThreeProcessesAreServedInArrivalOrder() throws Exception {
        String key = "ordered";
        List<JvmProcess> processes = startWorkers(3, key, 10);
        LockRegistry registry = this.store.registry(this.namespace, Duration.ofSeconds(10), "test");
        FencedLock holder = registry.obtain(key, true);
        holder.lock();
        List<String> arrival = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            for (int p = 0; p < processes.size(); p++) {
                String label = "p" + p + "-r" + round;
                long queued = entries(key);
                processes.get(p).sendLine("ACQUIRE " + label);
                await().atMost(LONG).until(() -> entries(key) == queued + 1);
                arrival.add(label);
            }
        }
        holder.unlock();
        for (int p = 0; p < processes.size(); p++) {
            String label = "p" + p + "-r1";
            processes.get(p).awaitLine(line -> line.startsWith("ACQUIRED " + label), LONG);
        }
        CriticalSectionChecker journal = journal();
        journal.check(arrival.size()).assertNoViolations();
        assertThat(journal.events().stream().filter(event -> event.kind() == Kind.ENTER).map(Event::thread))
            .containsExactlyElementsOf(arrival);
    }

    @Test
    void killedHolderFreesTheLockWithinTheLeaseTtlPlusOneSecond() throws Exception {
        long ttlSeconds = 3;
        Duration recovery = handoffAfterStoppingTheHolder("crash", ttlSeconds, JvmProcess::kill);
        assertThat(recovery).isLessThan(Duration.ofSeconds(ttlSeconds + 1));
    }

    @Test
    void holderShutDownCleanlyFreesTheLockAtOnce() throws Exception {
        Duration handoff = handoffAfterStoppingTheHolder("graceful", 30, JvmProcess::terminate);
        // Far below the 30 s TTL: the shutdown hook closed the registry, which released the lock.
        assertThat(handoff).isLessThan(Duration.ofSeconds(3));
    }

    /**
     * Lets a worker JVM hold {@code key}, queues a fair waiter in this JVM, stops the worker and
     * measures how long the waiter took to get the lock from then.
     */
    private Duration handoffAfterStoppingTheHolder(String key, long ttlSeconds, Consumer<JvmProcess> stop)
            throws Exception {
        JvmProcess holder = startWorkers(1, key, ttlSeconds).get(0);
        holder.sendLine("HOLD");
        holder.awaitLine(line -> line.startsWith("HOLDING"), LONG);
        LockRegistry registry = this.store.registry(this.namespace, Duration.ofSeconds(10), "test");
        CompletableFuture<Long> acquiredAt = waitInBackground(registry.obtain(key, true));
        await().atMost(LONG).until(() -> entries(key) == 2);
        long stoppedAt = System.nanoTime();
        stop.accept(holder);
        return Duration.ofNanos(acquiredAt.get(LONG.toSeconds(), TimeUnit.SECONDS) - stoppedAt);
    }

    /** Waits for {@code lock} on another thread; completes with the nano time it was acquired. */
    private static CompletableFuture<Long> waitInBackground(FencedLock lock) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                if (!lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("not acquired within " + LONG);
                }
                long at = System.nanoTime();
                lock.unlock();
                return at;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
    }

    private List<JvmProcess> startWorkers(int count, String key, long ttlSeconds) {
        List<JvmProcess> started = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            JvmProcess process = JvmProcess.builder(LockWorkerMain.class)
                .args(this.store.spec(), this.namespace, key, Long.toString(ttlSeconds),
                        this.journal.toString(), "p" + i)
                .start();
            this.workers.add(process);
            started.add(process);
        }
        for (JvmProcess process : started) {
            process.awaitLine(line -> line.startsWith("READY"), LONG);
        }
        return started;
    }

    private CriticalSectionChecker journal() throws Exception {
        CriticalSectionChecker checker = new CriticalSectionChecker();
        if (Files.exists(this.journal)) {
            checker.replay(Files.readAllLines(this.journal, StandardCharsets.UTF_8));
        }
        return checker;
    }

    private long entries(String key) {
        return this.store.entries(this.namespace, key);
    }
}
