package io.github.distlock.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.autoconfigure.EtcdUnreachableException;
import io.github.distlock.autoconfigure.app.Inventory;
import io.github.distlock.autoconfigure.app.InventoryApplication;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.FaultInjectionTest;
import io.github.distlock.testsupport.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A Spring Boot application whose etcd is unreachable when it starts: by default it starts, every
 * locked call fails within its wait timeout, and the first call after etcd becomes reachable
 * works; with {@code distributed-lock.etcd.fail-fast} it does not start, and says why and what to do.
 */
@FaultInjectionTest
@ExtendWith(OutputCaptureExtension.class)
class UnreachableAtStartupApplicationIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    /** Slack for scheduling on a loaded 2-core machine, added to every bound. */
    private static final Duration SLACK = Duration.ofMillis(1500);

    private static final Duration LONG = Duration.ofSeconds(60);

    private final String namespace = "/fault-startup-" + UUID.randomUUID() + "/";

    private TcpProxy proxy;

    @BeforeEach
    void cutEtcdOff() {
        this.proxy = TcpProxy.start(etcd.clientEndpoints().get(0));
        this.proxy.reset();
    }

    @AfterEach
    void closeProxy() {
        this.proxy.close();
    }

    @Test
    void applicationStartsAndLockedCallsFailWithinTheirWaitTimeoutUntilEtcdIsReachable(CapturedOutput output) {
        try (ConfigurableApplicationContext context = start(false)) {
            // The start-up WARN says where etcd was looked for, as the other stores' do.
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(output)
                .contains("etcd at [" + this.proxy.endpoint() + "] is not reachable yet; locks will connect on first use"));
            Inventory inventory = context.getBean(Inventory.class);
            long called = System.nanoTime();
            assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> inventory.reserve("apple"))
                .withMessageContaining(this.proxy.endpoint())
                .satisfies(ex -> assertThat(ex.getKey()).isEqualTo("item:apple"));
            // wait-timeout=2s
            assertThat(Duration.ofNanos(System.nanoTime() - called)).isLessThan(Duration.ofSeconds(2).plus(SLACK));
            called = System.nanoTime();
            assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> inventory.reserveNow("apple"))
                .withMessageContaining(this.proxy.endpoint());
            // waitTimeout = "0": one attempt, which gets at least a second for its round trips.
            assertThat(Duration.ofNanos(System.nanoTime() - called)).isLessThan(Duration.ofSeconds(1).plus(SLACK));
            EtcdLockRegistry registry = context.getBean(EtcdLockRegistry.class);
            assertThat(registry.isSessionAlive()).isFalse();
            assertThat(registry.getWaitingThreadCount()).isZero();

            this.proxy.restore();
            // The client reconnects on its own pace: on a loaded machine a call's 2 s can end before
            // the watch stream is back, so the calls are retried for a generous while.
            await().atMost(LONG).ignoreException(LockAcquisitionException.class)
                .until(() -> inventory.reserve("apple") > 0);
            assertThat(registry.isSessionAlive()).isTrue();
        }
    }

    @Test
    void failFastStopsTheStartNamingTheEndpointsAndWhatToDo(CapturedOutput output) {
        long started = System.nanoTime();
        assertThatException().isThrownBy(() -> start(true).close())
            .satisfies(ex -> assertThat(rootCauseChain(ex)).anySatisfy(cause -> assertThat(cause)
                .isInstanceOf(EtcdUnreachableException.class)
                .hasMessageContaining("etcd at [" + this.proxy.endpoint() + "] could not be reached at start-up")));
        // request-timeout=2s: two bounded steps.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4).plus(SLACK));
        assertThat(output).contains("The distributed lock store could not reach etcd at [" + this.proxy.endpoint() + "]")
            .contains("set distributed-lock.etcd.fail-fast=false to start without etcd");
    }

    @Test
    void failFastStartsWhenEtcdIsReachable() {
        this.proxy.restore();
        try (ConfigurableApplicationContext context = start(true)) {
            assertThat(context.getBean(EtcdLockRegistry.class).isSessionAlive()).isTrue();
            assertThat(context.getBean(Inventory.class).reserveNow("pear")).isPositive();
        }
    }

    private ConfigurableApplicationContext start(boolean failFast) {
        return SpringApplication.run(InventoryApplication.class,
                "--distributed-lock.etcd.endpoints=" + this.proxy.endpoint(),
                "--distributed-lock.etcd.namespace=" + this.namespace,
                "--distributed-lock.etcd.request-timeout=2s", "--distributed-lock.wait-timeout=2s",
                "--distributed-lock.etcd.fail-fast=" + failFast, "--spring.main.banner-mode=off");
    }

    private static List<Throwable> rootCauseChain(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }
}
