package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.autoconfigure.contending.ContendingApp;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.JvmProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three JVMs, each running {@link ContendingApp}, contend for one key through a real etcd with
 * {@code @DistributedLock} methods: no two critical sections overlap, every acquisition gets a
 * greater fence than the one before, and fair waiters are served in the order they queued.
 */
class ContendingApplicationIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private static final Duration WORK_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path directory;

    private final String namespace = "/contend-" + UUID.randomUUID() + "/";

    private final List<JvmProcess> processes = new ArrayList<>();

    private Client client;

    @BeforeEach
    void startProcesses() {
        this.client = etcd.newClient();
        for (String id : List.of("A", "B", "C")) {
            this.processes.add(JvmProcess.start(ContendingApp.class,
                    "--distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints()),
                    "--distributed-lock.etcd.namespace=" + this.namespace, "--spring.application.name=contender-" + id,
                    "--logging.level.root=WARN", "--contend.id=" + id, "--contend.dir=" + this.directory));
        }
        for (JvmProcess process : this.processes) {
            process.awaitLine("READY"::equals, START_TIMEOUT);
        }
    }

    @AfterEach
    void stopProcesses() {
        this.processes.forEach(JvmProcess::close);
        this.client.close();
    }

    @Test
    void criticalSectionsNeverOverlapAndFencesIncrease() throws IOException {
        int rounds = 25;
        for (JvmProcess process : this.processes) {
            process.sendLine("run " + rounds);
            process.sendLine("fair " + rounds);
        }
        for (JvmProcess process : this.processes) {
            process.awaitLine("DONE run"::equals, WORK_TIMEOUT);
            process.awaitLine("DONE fair"::equals, WORK_TIMEOUT);
        }
        assertNoOverlapOrFailure();
        int entries = this.processes.size() * 2 * rounds;
        assertThat(Files.readString(this.directory.resolve("counter")).trim()).isEqualTo(Integer.toString(entries));
        List<Long> fences = log().stream().map((line) -> Long.parseLong(line.split(" ")[1])).toList();
        assertThat(fences).hasSize(entries).isSorted().doesNotHaveDuplicates();
        assertThat(log()).extracting((line) -> line.split(" ")[0]).contains("A", "B", "C");
    }

    @Test
    void fairWaitersAreServedInTheOrderTheyQueued() throws Exception {
        JvmProcess first = this.processes.get(0);
        first.sendLine("hold");
        first.awaitLine(line -> line.startsWith("HOLDING "), WORK_TIMEOUT);
        this.processes.get(1).sendLine("fair 1");
        awaitQueueLength(2);
        this.processes.get(2).sendLine("fair 1");
        awaitQueueLength(3);
        first.sendLine("release");
        for (JvmProcess waiter : this.processes.subList(1, 3)) {
            waiter.awaitLine("DONE fair"::equals, WORK_TIMEOUT);
        }
        assertNoOverlapOrFailure();
        assertThat(log()).extracting((line) -> line.split(" ")[0]).containsExactly("A", "B", "C");
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(queueLength()).isZero());
    }

    private void assertNoOverlapOrFailure() {
        for (JvmProcess process : this.processes) {
            assertThat(process.lines()).as(process + " output")
                .noneMatch((line) -> line.startsWith("OVERLAP") || line.startsWith("FAILED"));
        }
    }

    private List<String> log() throws IOException {
        return Files.readAllLines(this.directory.resolve("log"), StandardCharsets.UTF_8);
    }

    private void awaitQueueLength(int length) {
        await().atMost(Duration.ofSeconds(30)).until(() -> queueLength() == length);
    }

    /** Entries in etcd under the test's namespace: the holder and the waiters of the one key. */
    private long queueLength() throws Exception {
        return this.client.getKVClient()
            .get(ByteSequence.from(this.namespace, StandardCharsets.UTF_8),
                    GetOption.builder().isPrefix(true).withCountOnly(true).build())
            .get(5, TimeUnit.SECONDS)
            .getCount();
    }
}
