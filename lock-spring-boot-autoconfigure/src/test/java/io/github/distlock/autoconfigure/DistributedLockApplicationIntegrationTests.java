package io.github.distlock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.app.Inventory;
import io.github.distlock.autoconfigure.app.InventoryApplication;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A new Spring Boot application whose only configuration is
 * {@code distributed-lock.etcd.endpoints} gets working locks in etcd, and releases them when it
 * shuts down.
 */
class DistributedLockApplicationIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final String NAMESPACE = "/distributed-lock/";

    private Client client;

    @BeforeEach
    void connect() {
        this.client = etcd.newClient();
    }

    @AfterEach
    void disconnect() {
        this.client.close();
    }

    @Test
    void annotatedMethodsLockInEtcdWithNothingButTheEndpointsConfigured() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            assertThat(context.getBean(LockRegistry.class)).isInstanceOf(EtcdLockRegistry.class);
            Inventory inventory = context.getBean(Inventory.class);
            long first = inventory.reserve("apple");
            long second = inventory.reserve("apple");
            assertThat(second).isGreaterThan(first);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Long> holder = holdInBackground(inventory, "apple", held, release);
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            List<KeyValue> entries = lockEntries();
            assertThat(entries).hasSize(1);
            assertThat(entries.get(0).getKey().toString(StandardCharsets.UTF_8)).startsWith(NAMESPACE);
            assertThat(entries.get(0).getValue().toString(StandardCharsets.UTF_8))
                .contains(":" + ProcessHandle.current().pid());
            assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> inventory.reserveNow("apple"))
                .satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("item:apple"));
            assertThat(inventory.reserveNow("pear")).isGreaterThan(second);
            release.countDown();
            assertThat(holder.get(10, TimeUnit.SECONDS)).isGreaterThan(second);
            // The failed try-once's entry is deleted in the background.
            await().atMost(Duration.ofSeconds(30)).until(() -> lockEntries().isEmpty());
        }
    }

    @Test
    void shutdownReleasesHeldLocksWithoutWaitingForTheLeaseAndClosesTheClient() throws Exception {
        ConfigurableApplicationContext context = start();
        Inventory inventory = context.getBean(Inventory.class);
        Client applicationClient = context.getBean(Client.class);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Long> holder = holdInBackground(inventory, "plum", held, release);
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lockEntries()).hasSize(1);
        context.close();
        // Below the 10 s lease less the up to 3.3 s since its last renewal: gone by the release, not the lease.
        await().atMost(Duration.ofSeconds(5)).until(() -> lockEntries().isEmpty());
        assertThatException().isThrownBy(() -> applicationClient.getKVClient()
            .get(ByteSequence.from(NAMESPACE, StandardCharsets.UTF_8))
            .get(5, TimeUnit.SECONDS));
        release.countDown();
        assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> holder.get(10, TimeUnit.SECONDS))
            .withCauseInstanceOf(LockLostException.class);
    }

    private ConfigurableApplicationContext start() {
        return SpringApplication.run(InventoryApplication.class,
                "--distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints()));
    }

    private static CompletableFuture<Long> holdInBackground(Inventory inventory, String item, CountDownLatch held,
            CountDownLatch release) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                result.complete(inventory.hold(item, held, release));
            }
            catch (Throwable ex) {
                result.completeExceptionally(ex);
            }
        }, "holder-" + item);
        thread.start();
        return result;
    }

    private List<KeyValue> lockEntries() throws Exception {
        ByteSequence prefix = ByteSequence.from(NAMESPACE, StandardCharsets.UTF_8);
        return this.client.getKVClient()
            .get(prefix, GetOption.builder().isPrefix(true).build())
            .get(5, TimeUnit.SECONDS)
            .getKvs();
    }
}
