package io.github.distlock.etcd;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the engine logs, against a real etcd: DEBUG traces of acquire, release and handoff with
 * key and fence, WARN for a lost hold, and nothing at INFO or above for ordinary calls.
 */
class EtcdLockRegistryLoggingIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration LONG = Duration.ofSeconds(30);

    private final Logger engineLogger = (Logger) LoggerFactory.getLogger("io.github.distlock");

    private final ListAppender<ILoggingEvent> events = new ListAppender<>();

    private Level levelBefore;

    private Client client;

    private EtcdLockRegistry holder;

    private EtcdLockRegistry waiter;

    @BeforeEach
    void setUp() {
        this.levelBefore = this.engineLogger.getLevel();
        this.engineLogger.setLevel(Level.DEBUG);
        this.events.start();
        this.engineLogger.addAppender(this.events);
        this.client = etcd.newClient();
        String namespace = "/logging-" + UUID.randomUUID() + "/";
        this.holder = registry(namespace, "holder");
        this.waiter = registry(namespace, "waiter");
    }

    @AfterEach
    void tearDown() {
        etcd.cluster().ensureAllRunning();
        this.holder.close();
        this.waiter.close();
        this.client.close();
        this.engineLogger.detachAppender(this.events);
        this.engineLogger.setLevel(this.levelBefore);
    }

    private EtcdLockRegistry registry(String namespace, String owner) {
        return EtcdLockRegistry.builder(this.client)
            .namespace(namespace)
            .leaseTtl(Duration.ofSeconds(2))
            .ownerIdentity(owner)
            .endpoints(etcd.clientEndpoints())
            .build();
    }

    @Test
    void tracesAcquireReleaseAndHandoffAtDebugOnly() throws Exception {
        FencedLock held = this.holder.obtain("order-7", true);
        held.lock();
        long holderFence = held.getFence();
        CompletableFuture<Long> handedOver = CompletableFuture.supplyAsync(() -> {
            FencedLock lock = this.waiter.obtain("order-7", true);
            try {
                assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            long fence = lock.getFence();
            lock.unlock();
            return fence;
        });
        await().atMost(LONG).until(() -> this.waiter.getWaitingThreadCount() == 1);
        held.unlock();
        long waiterFence = handedOver.get(LONG.toSeconds(), TimeUnit.SECONDS);

        assertThat(messagesAt(Level.DEBUG)).anySatisfy(message -> assertThat(message)
            .startsWith("Acquired lock 'order-7' with fence " + holderFence + " after"));
        assertThat(messagesAt(Level.DEBUG)).contains("Released lock 'order-7' with fence " + holderFence);
        assertThat(messagesAt(Level.DEBUG)).anySatisfy(message -> assertThat(message)
            .startsWith("Acquired lock 'order-7' with fence " + waiterFence)
            .contains("handed over by holder/" + Thread.currentThread().getName()));
        assertThat(messagesAt(Level.DEBUG)).contains("Released lock 'order-7' with fence " + waiterFence);
        assertThat(this.events.list).noneMatch(event -> event.getLevel().isGreaterOrEqual(Level.INFO));
    }

    @Test
    void warnsOnceWhenAHoldIsLost() throws Exception {
        FencedLock held = this.holder.obtain("order-8");
        held.lock();
        long fence = held.getFence();
        etcd.cluster().member(0).pause();
        try {
            await().atMost(LONG).pollInSameThread().until(() -> !held.isLockedByCurrentThread());
            await().atMost(LONG).until(() -> messagesAt(Level.WARN).stream().anyMatch(m -> m.contains("order-8")));
        }
        finally {
            etcd.cluster().member(0).resume();
        }
        assertThat(held.isLockedByCurrentThread()).isFalse();
        // Closing revokes a lease etcd already dropped: expected, so not worth a warning.
        this.holder.close();
        assertThat(messagesAt(Level.WARN))
            .filteredOn(message -> message.startsWith("Lock 'order-8' (fence " + fence + ") lost while held"))
            .hasSize(1);
        assertThat(messagesAt(Level.WARN)).allSatisfy(message -> assertThat(message)
            .matches("(etcd session lease \\p{XDigit}+ ended: .*|Lock 'order-8' .*)"));
        assertThat(messagesAt(Level.INFO)).isEmpty();
    }

    @Test
    void silentWatchStreamIsAskedForProgressAndKeptWhileItAnswers() throws Exception {
        // A 1 s request timeout is the probe interval: a waiter for 4 s sees several probes.
        this.engineLogger.setLevel(Level.TRACE);
        String namespace = "/logging-probe-" + UUID.randomUUID() + "/";
        try (EtcdLockRegistry quickHolder = EtcdLockRegistry.builder(this.client).namespace(namespace)
            .requestTimeout(Duration.ofSeconds(1)).ownerIdentity("holder").build();
                EtcdLockRegistry quickWaiter = EtcdLockRegistry.builder(this.client).namespace(namespace)
                    .requestTimeout(Duration.ofSeconds(1)).ownerIdentity("waiter").build()) {
            FencedLock held = quickHolder.obtain("order-9", true);
            held.lock();
            FencedLock waiting = quickWaiter.obtain("order-9", true);
            long start = System.nanoTime();
            assertThat(waiting.tryLock(4, TimeUnit.SECONDS)).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(4));
            held.unlock();
        }
        assertThat(this.events.list).filteredOn(event -> event.getLevel() == Level.TRACE)
            .map(ILoggingEvent::getFormattedMessage)
            .anySatisfy(message -> assertThat(message).startsWith("Lock watch stream reported progress at revision"));
        assertThat(messagesAt(Level.DEBUG)).noneMatch(message -> message.contains("did not answer a progress request"));
    }

    private List<String> messagesAt(Level level) {
        return this.events.list.stream()
            .filter(event -> event.getLevel() == level)
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    }
}
