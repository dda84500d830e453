package io.github.distlock.sample.observability;

import java.time.Duration;
import java.util.List;

import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleHttp.Reply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code /actuator/distributedlocks} over HTTP while etcd is down: a quick 503 with a short
 * reason, both before and after the registry noticed that its session is lost, and 200 again once
 * etcd is back.
 */
class LockStoreOutageIntegrationTests extends AbstractSampleIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    // The registry's request timeout is 5 s: an answer within this bound did not wait for it.
    private static final Duration QUICK = Duration.ofSeconds(3);

    private static final List<String> PATHS = List.of("/actuator/distributedlocks",
            "/actuator/distributedlocks/orders/42");

    @Autowired
    private EtcdLockRegistry registry;

    @AfterEach
    void restoreEtcd() {
        SampleEtcd.cluster().ensureAllRunning();
    }

    @Test
    void answersServiceUnavailableQuicklyWhileEtcdIsDownAndRecovers() {
        await().atMost(LONG).until(this.registry::isSessionAlive);
        assertThat(this.http.get(PATHS.get(0)).status()).isEqualTo(200);

        SampleEtcd.cluster().member(0).stop();
        // The session outlives etcd by up to its lease TTL: reads are attempted, and bounded.
        assertThat(this.registry.isSessionAlive()).isTrue();
        PATHS.forEach(this::assertQuicklyUnavailable);

        await().atMost(LONG).until(() -> !this.registry.isSessionAlive());
        for (int i = 0; i < 3; i++) {
            PATHS.forEach(this::assertQuicklyUnavailable);
        }

        SampleEtcd.cluster().member(0).restart();
        await().atMost(LONG).until(() -> this.http.get(PATHS.get(0)).status() == 200);
        Reply one = this.http.get(PATHS.get(1));
        assertThat(one.status()).as(one.toString()).isEqualTo(200);
        assertThat(one.<String>json("$.key")).isEqualTo("orders/42");
    }

    private void assertQuicklyUnavailable(String path) {
        long start = System.nanoTime();
        Reply reply = this.http.get(path);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        assertThat(reply.status()).as(path + " answered " + reply).isEqualTo(503);
        assertThat(elapsed).as(path + " answered after " + elapsed).isLessThan(QUICK);
        assertThat(reply.<String>json("$.error")).isEqualTo("lock store unavailable");
        assertThat(reply.<String>json("$.reason")).isNotBlank();
        String endpoint = SampleEtcd.cluster().member(0).clientEndpoint();
        assertThat(reply.body()).as(reply.toString())
            .hasSizeLessThan(400)
            .doesNotContain(endpoint.substring(endpoint.indexOf("//") + 2), "Exception", "\tat ", "trace");
    }
}
