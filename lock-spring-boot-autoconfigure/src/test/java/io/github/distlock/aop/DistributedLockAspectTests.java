package io.github.distlock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockContext;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnLockLost;
import io.github.distlock.annotation.OnTimeout;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What {@code @DistributedLock} does around a call: keys, waiting, timeouts, reentrancy,
 * {@link LockContext} and lost locks, with the auto-configured advice and a recording in-memory
 * registry.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockAspectTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withUserConfiguration(LockedServices.class)
        .withPropertyValues("distributed-lock.wait-timeout=2s", "orders.wait=750ms");

    @Test
    void keyFromParameterName() {
        this.contextRunner.run((context) -> {
            assertThat(orders(context).ship("o-17")).isEqualTo("order:o-17");
            assertThat(registry(context).journal()).startsWith("obtain order:o-17 unfair");
        });
    }

    @Test
    void keyFromPositionAndRoot() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThat(orders.byPosition("a", "b")).isEqualTo("a/b");
            assertThat(orders.byRoot()).isEqualTo("Orders.byRoot");
        });
    }

    @Test
    void keyFromBeanReference() {
        this.contextRunner.run((context) -> assertThat(orders(context).byBean(7)).isEqualTo("tenant-a:7"));
    }

    @Test
    void emptyKeyLocksTheMethodAsAWhole() {
        this.contextRunner.run((context) -> assertThat(orders(context).wholeMethod())
            .isEqualTo(Orders.class.getName() + ".wholeMethod"));
    }

    @Test
    void nullOrEmptyKeyFailsTheCallBeforeAnyLockIsTaken() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byId(null))
                .withMessageContaining("Lock key '#id'")
                .withMessageContaining(Orders.class.getName() + ".byId(String)")
                .withMessageContaining("evaluated to null");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byId(""))
                .withMessageContaining("evaluated to an empty string");
            assertThat(registry(context).journal()).isEmpty();
            assertThat(orders.calls()).isEqualTo(0);
        });
    }

    /**
     * SpEL concatenates null as "null": the README's own pattern would lock every call without an
     * order id on "order:null", one lock for all of them.
     */
    @Test
    void keyConcatenatingAMissingValueFailsTheCallNamingIt() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatIllegalArgumentException().isThrownBy(() -> orders.ship(null))
                .withMessageContaining("Lock key ''order:' + #orderId' of " + Orders.class.getName() + ".ship(String)")
                .withMessageContaining("#orderId is null, so the key is 'order:null'")
                .withMessageContaining("(#orderId ?: 'none')");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.ship(""))
                .withMessageContaining("#orderId is an empty string, so the key is 'order:'");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byJob(Map.of("tenant", "acme")))
                .withMessageContaining("#job['id'] is null, so the key is 'acme/job:null'");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byJob(Map.of("id", "7")))
                .withMessageContaining("#job['tenant'] is null");
            assertThat(registry(context).journal()).isEmpty();
            assertThat(orders.calls()).isEqualTo(0);

            assertThat(orders.byJob(Map.of("tenant", "acme", "id", "7"))).isEqualTo("acme/job:7");
            assertThat(orders.ship("42")).isEqualTo("order:42");
            // Where a missing value is meant to share one lock, the key says so.
            assertThat(orders.byJobOrNone(null)).isEqualTo("job:none");
            assertThat(orders.byJobIfAny(null)).isEqualTo("job:any");
            assertThat(orders.byJobText(null)).isEqualTo("job:null");
        });
    }

    @Test
    void keyWithoutAStableTextFailsTheCallBeforeAnyLockIsTaken() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            // Object.toString() names the instance: every call (or every JVM) would lock a key of its own.
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byArguments("a", "b"))
                .withMessageContaining("Lock key '#root.args'")
                .withMessageContaining(Orders.class.getName() + ".byArguments(String, String)")
                .withMessageContaining("an Object[]");
            assertThatIllegalArgumentException().isThrownBy(() -> orders.byTarget())
                .withMessageContaining("Lock key '#root.target'")
                .withMessageContaining("toString()");
            assertThat(registry(context).journal()).isEmpty();
            assertThat(orders.calls()).isEqualTo(0);
        });
    }

    @Test
    void aWaitLongerThanNanosecondsCanCountIsTheLongestWait() {
        // 200000 days do not fit a long of nanoseconds; Duration.toNanos() would throw on every call.
        this.contextRunner.run((context) -> assertThat(orders(context).waitsAsLongAsItTakes("long-wait"))
            .isEqualTo("long-wait"));
    }

    @Test
    void keyExpressionThatThrowsFailsTheCallWithThatCause() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatIllegalArgumentException().isThrownBy(() -> orders.throwingKey("x"))
                .withMessageContaining("Lock key '@tenant.fail(#id)'")
                .withMessageContaining("could not be evaluated")
                .havingRootCause()
                .isInstanceOf(IllegalStateException.class)
                .withMessage("no tenant for x");
            assertThat(registry(context).journal()).isEmpty();
            assertThat(orders.calls()).isEqualTo(0);
        });
    }

    @Test
    void fairAttributeChoosesTheLock() {
        this.contextRunner.run((context) -> {
            orders(context).fairly();
            assertThat(registry(context).journal()).startsWith("obtain fair-one fair");
        });
    }

    @Test
    void waitTimeoutFromAnnotationPlaceholderOrDefault() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            orders.ship("a");
            orders.withPlaceholderWait();
            orders.noWait();
            assertThat(registry(context).waits()).containsExactly(Duration.ofSeconds(2), Duration.ofMillis(750),
                    Duration.ZERO);
        });
    }

    @Test
    void lockIsHeldDuringTheCallAndReleasedAfterIt() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThat(orders.holdsDuringCall("k")).isTrue();
            assertThat(registry(context).isLocked("k")).isFalse();
            assertThat(registry(context).journal()).containsExactly("obtain k unfair", "wait k", "acquire k",
                    "release k");
        });
    }

    @Test
    void lockIsReleasedWhenTheMethodThrows() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatIllegalStateException().isThrownBy(() -> orders.failing("k")).withMessage("boom");
            assertThat(registry(context).isLocked("k")).isFalse();
            assertThat(registry(context).journal()).endsWith("release k");
        });
    }

    @Test
    void timedOutCallNamesTheHolderWithoutReadingTheStoreAgain() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            RecordingLockRegistry registry = registry(context);
            // A holder read would now take a minute, as on a stalled etcd: the timeout must not wait for it.
            registry.stallHolderReads();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.block("stalled", entered, finish));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            LockAcquisitionException ex = assertThrows(LockAcquisitionException.class, () -> orders.tryOnce("stalled"));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(ex.getHolder()).isNotBlank();
            assertThat(registry.journal()).doesNotContain("read holder stalled");
            finish.countDown();
            holder.get(5, TimeUnit.SECONDS);
        });
    }

    @Test
    void callsWithTheSameKeyExcludeEachOther() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.block("shared", entered, finish));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            LockAcquisitionException ex = assertThrows(LockAcquisitionException.class, () -> orders.tryOnce("shared"));
            assertThat(ex.getKey()).isEqualTo("shared");
            assertThat(ex.getReason()).isEqualTo(LockAcquisitionException.Reason.TIMED_OUT);
            assertThat(ex.getWaited()).isNotNull();
            assertThat(ex.getHolder()).isNotBlank();
            assertThat(ex.getMessage()).contains("Could not acquire lock 'shared' after")
                .contains("(held by " + ex.getHolder() + ")")
                .contains("another owner held it for the whole wait timeout (0 ms)")
                .contains(Orders.class.getName() + ".tryOnce(String)");
            assertThat(orders.tryOnce("other")).isEqualTo("other");
            finish.countDown();
            holder.get(5, TimeUnit.SECONDS);
            assertThat(orders.tryOnce("shared")).isEqualTo("shared");
        });
    }

    @Test
    void timeoutWaitsForTheConfiguredDuration() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.block("slow", entered, finish));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            LockAcquisitionException ex = assertThrows(LockAcquisitionException.class, () -> orders.shortWait("slow"));
            assertThat(ex.getWaited()).isGreaterThanOrEqualTo(Duration.ofMillis(100));
            finish.countDown();
            holder.get(5, TimeUnit.SECONDS);
        });
    }

    @Test
    void skipOnTimeoutReturnsQuietlyWithoutRunningTheMethod(CapturedOutput output) {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture
                .runAsync(() -> orders.block("nightly-report", entered, finish));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            int before = orders.calls();
            orders.scheduledJob();
            assertThat(orders.optionalJob()).isEmpty();
            assertThat(orders.calls()).isEqualTo(before);
            finish.countDown();
            holder.get(5, TimeUnit.SECONDS);
            orders.scheduledJob();
            assertThat(orders.optionalJob()).contains("ran");
            assertThat(orders.calls()).isEqualTo(before + 2);
        });
        assertThat(output).doesNotContain("nightly-report");
    }

    @Test
    void interruptedWaitFailsAndKeepsTheInterruptStatus() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> orders.block("busy", entered, finish));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Boolean> interruptStatus = new CopyOnWriteArrayList<>();
            Thread waiter = new Thread(() -> {
                try {
                    orders.waitLong("busy");
                }
                catch (Throwable ex) {
                    failures.add(ex);
                    interruptStatus.add(Thread.currentThread().isInterrupted());
                }
            });
            waiter.start();
            await().atMost(Duration.ofSeconds(5))
                .until(() -> registry(context).journal().stream().filter("wait busy"::equals).count() == 2);
            waiter.interrupt();
            waiter.join(5000);
            assertThat(failures).singleElement()
                .isInstanceOfSatisfying(LockAcquisitionException.class,
                        (ex) -> assertThat(ex).hasMessageContaining("interrupted")
                            .hasCauseInstanceOf(InterruptedException.class));
            assertThat(interruptStatus).containsExactly(true);
            finish.countDown();
            holder.get(5, TimeUnit.SECONDS);
        });
    }

    @Test
    void nestedCallsOnTheSameKeyReenter() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThat(orders.outer("same")).containsExactly(1, 2, 1);
            assertThat(registry(context).isLocked("same")).isFalse();
        });
    }

    @Test
    void lockContextExposesTheInnermostLock() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThat(orders.nestedKeys("outer", "inner")).containsExactly("outer", "inner", "outer");
            assertThatIllegalStateException().isThrownBy(LockContext::current)
                .withMessageContaining("No @DistributedLock lock is held by this thread");
            assertThatIllegalStateException().isThrownBy(LockContext::currentFence);
        });
    }

    @Test
    void fenceInsideTheCallIsTheLocksFenceAndIncreases() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            long first = orders.fence("f");
            long second = orders.fence("f");
            assertThat(second).isGreaterThan(first);
        });
    }

    @Test
    void lostLockFailsTheCallAfterTheMethodRanAndIsPublished() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            LockLostException ex = assertThrows(LockLostException.class,
                    () -> orders.losing("lost-1"));
            assertThat(ex.getKey()).isEqualTo("lost-1");
            assertThat(orders.calls()).isEqualTo(1);
            LockLostEvent event = context.getBean(LostLocks.class).single();
            assertThat(event.getKey()).isEqualTo("lost-1");
            assertThat(event.getFence()).isEqualTo(ex.getFence());
            assertThat(event.getException()).isSameAs(ex);
            assertThat(event.getMethod().getName()).isEqualTo("losing");
            assertThat(event.getSource()).isInstanceOf(Orders.class);
            assertThat(registry(context).isLocked("lost-1")).isFalse();
        });
    }

    @Test
    void lostLockCanBeReportedAsAWarningOnly(CapturedOutput output) {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThat(orders.losingQuietly("lost-2")).isEqualTo("done");
            assertThat(context.getBean(LostLocks.class).single().getKey()).isEqualTo("lost-2");
        });
        assertThat(output).contains("WARN").contains("Lock 'lost-2'").contains("was lost while the method ran");
    }

    @Test
    void lostLockIsAddedToTheMethodsOwnFailure() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatIllegalStateException().isThrownBy(() -> orders.losingAndFailing("lost-3"))
                .withMessage("failed too")
                .satisfies((ex) -> assertThat(ex.getSuppressed()).singleElement()
                    .isInstanceOfSatisfying(LockLostException.class,
                            (lost) -> assertThat(lost.getKey()).isEqualTo("lost-3")));
            assertThat(context.getBean(LostLocks.class).events).hasSize(1);
        });
    }

    @Test
    void lostLockOfANestedCallIsReportedOnce() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> orders.outerLosing("lost-4"))
                .satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
            assertThat(context.getBean(LostLocks.class).events).hasSize(1);
            assertThat(registry(context).isLocked("lost-4")).isFalse();
        });
    }

    @Test
    void reenteringALostLockFailsAndIsReportedOnce() {
        this.contextRunner.run((context) -> {
            Orders orders = orders(context);
            assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> orders.loseThenReenter("lost-5"))
                .withMessageContaining("unlock first");
            assertThat(orders.calls()).isZero();
            assertThat(context.getBean(LostLocks.class).single().getKey()).isEqualTo("lost-5");
            assertThat(registry(context).isLocked("lost-5")).isFalse();
        });
    }

    private static Orders orders(AssertableApplicationContext context) {
        return context.getBean(Orders.class);
    }

    private static RecordingLockRegistry registry(AssertableApplicationContext context) {
        return context.getBean(RecordingLockRegistry.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class LockedServices {

        @Bean
        RecordingLockRegistry recordingLockRegistry() {
            return new RecordingLockRegistry();
        }

        @Bean
        Orders orders(RecordingLockRegistry registry) {
            return new Orders(registry);
        }

        @Bean
        Tenant tenant() {
            return new Tenant();
        }

        @Bean
        LostLocks lostLocks() {
            return new LostLocks();
        }
    }

    static class Tenant {

        public String prefix() {
            return "tenant-a";
        }

        public String fail(String id) {
            throw new IllegalStateException("no tenant for " + id);
        }
    }

    static class LostLocks implements ApplicationListener<LockLostEvent> {

        final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

        @Override
        public void onApplicationEvent(LockLostEvent event) {
            this.events.add(event);
        }

        LockLostEvent single() {
            assertThat(this.events).hasSize(1);
            return this.events.get(0);
        }
    }

    static class Orders {

        private final AtomicInteger calls = new AtomicInteger();

        private final RecordingLockRegistry registry;

        private Orders self;

        Orders(RecordingLockRegistry registry) {
            this.registry = registry;
        }

        @Autowired
        void setSelf(@Lazy Orders self) {
            this.self = self;
        }

        @DistributedLock(key = "'order:' + #orderId")
        public String ship(String orderId) {
            this.calls.incrementAndGet();
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#id")
        public void byId(String id) {
            this.calls.incrementAndGet();
        }

        @DistributedLock(key = "#job['tenant'] + '/job:' + #job['id']")
        public String byJob(Map<String, String> job) {
            this.calls.incrementAndGet();
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "'job:' + (#jobId ?: 'none')")
        public String byJobOrNone(String jobId) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#jobId != null ? 'job:' + #jobId : 'job:any'")
        public String byJobIfAny(String jobId) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "'job:' + T(java.util.Objects).toString(#jobId)")
        public String byJobText(String jobId) {
            return LockContext.current().getKey();
        }

        public int calls() {
            return this.calls.get();
        }

        @DistributedLock(key = "#root.args")
        public void byArguments(String first, String second) {
            this.calls.incrementAndGet();
        }

        @DistributedLock(key = "#root.target")
        public void byTarget() {
            this.calls.incrementAndGet();
        }

        @DistributedLock(key = "#key", waitTimeout = "200000d")
        public String waitsAsLongAsItTakes(String key) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#p0 + '/' + #a1")
        public String byPosition(String first, String second) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#root.targetClass.simpleName + '.' + #root.methodName")
        public String byRoot() {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "@tenant.prefix() + ':' + #id")
        public String byBean(int id) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "@tenant.fail(#id)")
        public void throwingKey(String id) {
            this.calls.incrementAndGet();
        }

        @DistributedLock
        public String wholeMethod() {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "'fair-one'", fair = true)
        public void fairly() {
        }

        @DistributedLock(key = "'placeholder'", waitTimeout = "${orders.wait}")
        public void withPlaceholderWait() {
        }

        @DistributedLock(key = "'no-wait'", waitTimeout = "0")
        public void noWait() {
        }

        @DistributedLock(key = "#key")
        public boolean holdsDuringCall(String key) {
            FencedLock lock = LockContext.current();
            return lock.getKey().equals(key) && lock.isLockedByCurrentThread() && lock.getHoldCount() == 1;
        }

        @DistributedLock(key = "#key")
        public void failing(String key) {
            throw new IllegalStateException("boom");
        }

        @DistributedLock(key = "#key")
        public void block(String key, CountDownLatch entered, CountDownLatch finish) {
            entered.countDown();
            try {
                finish.await(10, TimeUnit.SECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }

        @DistributedLock(key = "#key", waitTimeout = "0")
        public String tryOnce(String key) {
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#key", waitTimeout = "10s")
        public void waitLong(String key) {
        }

        @DistributedLock(key = "#key", waitTimeout = "100ms")
        public void shortWait(String key) {
        }

        @DistributedLock(key = "'nightly-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
        public void scheduledJob() {
            this.calls.incrementAndGet();
        }

        @DistributedLock(key = "'nightly-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
        public Optional<String> optionalJob() {
            this.calls.incrementAndGet();
            return Optional.of("ran");
        }

        @DistributedLock(key = "#key")
        public List<Integer> outer(String key) {
            List<Integer> holdCounts = new ArrayList<>();
            holdCounts.add(LockContext.current().getHoldCount());
            holdCounts.add(this.self.inner(key));
            holdCounts.add(LockContext.current().getHoldCount());
            return holdCounts;
        }

        @DistributedLock(key = "#key", waitTimeout = "0")
        public int inner(String key) {
            return LockContext.current().getHoldCount();
        }

        @DistributedLock(key = "#outerKey")
        public List<String> nestedKeys(String outerKey, String innerKey) {
            List<String> keys = new ArrayList<>();
            keys.add(LockContext.current().getKey());
            keys.add(this.self.currentKey(innerKey));
            keys.add(LockContext.current().getKey());
            return keys;
        }

        @DistributedLock(key = "#key")
        public String currentKey(String key) {
            assertThat(LockContext.currentFence()).isEqualTo(LockContext.current().getFence());
            return LockContext.current().getKey();
        }

        @DistributedLock(key = "#key")
        public long fence(String key) {
            return LockContext.currentFence();
        }

        @DistributedLock(key = "#key")
        public void losing(String key) {
            this.calls.incrementAndGet();
            this.registry.loseHoldOf(key);
        }

        @DistributedLock(key = "#key", onLockLost = OnLockLost.WARN)
        public String losingQuietly(String key) {
            this.registry.loseHoldOf(key);
            return "done";
        }

        @DistributedLock(key = "#key")
        public void losingAndFailing(String key) {
            this.registry.loseHoldOf(key);
            throw new IllegalStateException("failed too");
        }

        @DistributedLock(key = "#key")
        public void loseThenReenter(String key) {
            this.registry.loseHoldOf(key);
            this.self.byId(key);
        }

        @DistributedLock(key = "#key")
        public void outerLosing(String key) {
            this.self.losing(key);
        }
    }
}
