package io.github.distlock.fault;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.CriticalSectionChecker;
import io.github.distlock.testsupport.FencedResource;
import io.github.distlock.testsupport.FencedWriterMain;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A lease is not a lock: a holder frozen (SIGSTOP, like a long GC pause) past its lease TTL loses
 * the lock to another process, and when it runs again it must know (G5) and its fenced write must
 * be rejected by the resource (G3). The holder is a {@link FencedWriterMain} JVM on the store the
 * subclass names.
 */
@FaultInjectionTest
public abstract class AbstractPausedHolderTests {

    private static final long TTL_SECONDS = 2;

    private static final Duration LONG = Duration.ofSeconds(30);

    private String namespace;

    private String resourceName;

    private TestStore store;

    private LockRegistry registry;

    private JvmProcess holder;

    /** @return a new view of the store under test, with its own client; the caller closes it */
    protected abstract TestStore openStore();

    @BeforeEach
    void setUp() {
        String id = UUID.randomUUID().toString();
        this.store = openStore();
        this.namespace = this.store.namespace("fault-paused-" + id);
        this.resourceName = "fault-resource-" + id;
        this.registry = this.store.registry(this.namespace, Duration.ofSeconds(TTL_SECONDS), "test");
    }

    @AfterEach
    void tearDown() {
        if (this.holder != null) {
            this.holder.close();
        }
        this.store.close();
    }

    @Test
    void pausedHolderLosesTheLockAndItsStaleWriteIsRejected() throws Exception {
        String key = "paused";
        this.holder = JvmProcess.builder(FencedWriterMain.class)
            .args(this.store.spec(), this.namespace, key, Long.toString(TTL_SECONDS),
                    this.resourceName)
            .start();
        this.holder.awaitLine("READY"::equals, LONG);
        this.holder.sendLine("HOLD");
        long staleFence = Long.parseLong(this.holder.awaitLine(line -> line.startsWith("HOLDING "), LONG).split(" ")[1]);
        // What the resource saw, for the checker: the frozen holder's section has no exit, its
        // lease ended it, so only writes and the new holder's section are recorded.
        CriticalSectionChecker checker = new CriticalSectionChecker();
        assertThat(recordWrite(checker, "frozen", this.holder.request("WRITE from-holder-before-pause",
                line -> line.startsWith("WRITE "), LONG)))
            .as("write before the pause accepted").isTrue();

        this.holder.pause();
        long pausedAt = System.nanoTime();
        FencedLock lock = this.registry.obtain(key, true);
        assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        Duration acquiredAfter = Duration.ofNanos(System.nanoTime() - pausedAt);
        System.out.printf("[paused holder] another process entered %d ms after the holder froze (TTL %d s)%n",
                acquiredAfter.toMillis(), TTL_SECONDS);
        try {
            // Not before the holder's lease could have expired: its last renewal was at most a
            // third of the TTL before the pause, so the store keeps its hold for well over 1 s.
            assertThat(acquiredAfter).isGreaterThan(Duration.ofSeconds(1));
            // ...and while the holder is still frozen.
            assertThat(acquiredAfter).isLessThan(Duration.ofSeconds(3 * TTL_SECONDS));
            assertThat(this.holder.isAlive()).isTrue();
            long fence = lock.getFence();
            assertThat(fence).isGreaterThan(staleFence);
            checker.enter("test", "main", fence);
            FencedResource resource = this.store.resource(this.resourceName);
            checker.write("test", "main", fence, resource.write(fence, "from-new-holder"));

            // Keep the holder frozen for three lease TTLs in all, then let it run again.
            long resumeAt = pausedAt + Duration.ofSeconds(3 * TTL_SECONDS).toNanos();
            await().atMost(LONG).pollInterval(Duration.ofMillis(50)).until(() -> System.nanoTime() - resumeAt >= 0);
            this.holder.resume();

            // The stale holder carries on with its task first: the resource refuses its write...
            recordWrite(checker, "frozen", this.holder.request("WRITE from-stale-holder",
                    line -> line.startsWith("WRITE "), LONG));
            checker.exit("test", "main", fence);
            checker.check(1).assertNoViolations();
            // ...and the lock tells it that its hold is gone.
            this.holder.sendLine("CHECK");
            this.holder.awaitLine("LOCKED_BY_CURRENT_THREAD false"::equals, LONG);
            this.holder.sendLine("UNLOCK");
            String unlocked = this.holder.awaitLine(line -> line.startsWith("LOCK_LOST ")
                    || line.startsWith("UNLOCKED") || line.startsWith("UNLOCK_FAILED "), LONG);
            assertThat(unlocked).startsWith("LOCK_LOST ").contains(key);

            assertThat(resource.data()).isEqualTo("from-new-holder");
            assertThat(resource.storedFence()).isEqualTo(fence);
            // The stale holder neither took the lock back nor deleted the new holder's entry.
            assertThat(lock.isLockedByCurrentThread()).isTrue();
            assertThat(lock.getFence()).isEqualTo(fence);
        }
        finally {
            lock.unlock();
        }
    }

    /** Records a {@code WRITE ACCEPTED|REJECTED <fence>} answer of the holder process. */
    private static boolean recordWrite(CriticalSectionChecker checker, String process, String answer) {
        String[] words = answer.split(" ");
        boolean accepted = words[1].equals("ACCEPTED");
        checker.write(process, "main", Long.parseLong(words[2]), accepted);
        return accepted;
    }
}
