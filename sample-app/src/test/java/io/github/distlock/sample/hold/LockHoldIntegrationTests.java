package io.github.distlock.sample.hold;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleHttp;
import io.github.distlock.sample.SampleHttp.Reply;
import io.github.distlock.sample.SampleInstances;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code POST /locks/{key}/hold?seconds=N} on two instances: one request holds a key, requests
 * to both instances queue behind it, {@code /actuator/distributedlocks} shows the holder and the
 * waiters in arrival order, and they are served in that order; out-of-range hold times are
 * refused before any lock is taken.
 */
class LockHoldIntegrationTests extends AbstractSampleIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    private static final String KEY = "hold-demo";

    private static final String SECOND_OWNER = "second-instance@test-host:2";

    @Autowired
    private EtcdLockRegistry registry;

    private SampleInstances second;

    @AfterEach
    void stopSecondInstance() {
        if (this.second != null) {
            this.second.close();
        }
    }

    @Test
    void holderAndWaitersOfTwoInstancesAreShownAndServedInArrivalOrder() throws Exception {
        this.second = SampleInstances.start(1, SampleEtcd.endpoints(), "sample.report.enabled=false",
                "sample.seed=false", "distributed-lock.owner-identity=" + SECOND_OWNER);
        SampleHttp other = this.second.http(0);

        // The holder keeps the key 10 s: ample time to queue two waiters and look at them.
        CompletableFuture<Reply> holder = this.http.postAsync("/locks/" + KEY + "/hold?seconds=10");
        await().atMost(LONG).until(() -> holderOf(KEY) != null);
        CompletableFuture<Reply> firstWaiter = other.postAsync("/locks/" + KEY + "/hold?seconds=1");
        await().atMost(LONG).until(() -> waiterOwners(KEY).size() == 1);
        CompletableFuture<Reply> secondWaiter = this.http.postAsync("/locks/" + KEY + "/hold?seconds=1");
        await().atMost(LONG).until(() -> waiterOwners(KEY).size() == 2);

        Reply queue = this.http.get("/actuator/distributedlocks/" + KEY);
        assertThat(queue.status()).as(queue.toString()).isEqualTo(200);
        assertThat(queue.<String>json("$.holder.owner")).isEqualTo(this.registry.getOwnerIdentity());
        assertThat(queue.<List<String>>json("$.waiters[*].owner")).containsExactly(SECOND_OWNER,
                this.registry.getOwnerIdentity());
        long holderFence = queue.<Number>json("$.holder.fence").longValue();
        List<Number> waiterFences = queue.json("$.waiters[*].fence");
        // The other instance shows the same queue: it is read from etcd.
        Reply seenByOther = other.get("/actuator/distributedlocks/" + KEY);
        assertThat(seenByOther.<List<String>>json("$.waiters[*].owner")).containsExactly(SECOND_OWNER,
                this.registry.getOwnerIdentity());

        Reply held = holder.get(LONG.toSeconds(), TimeUnit.SECONDS);
        Reply first = firstWaiter.get(LONG.toSeconds(), TimeUnit.SECONDS);
        Reply last = secondWaiter.get(LONG.toSeconds(), TimeUnit.SECONDS);
        for (Reply reply : List.of(held, first, last)) {
            assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
            assertThat(reply.<String>json("$.key")).isEqualTo(KEY);
        }
        assertThat(held.<String>json("$.heldBy")).isEqualTo("test-instance");
        assertThat(first.<String>json("$.heldBy")).isEqualTo("instance-1");
        assertThat(last.<String>json("$.heldBy")).isEqualTo("test-instance");
        assertThat(held.<Number>json("$.fence").longValue()).isEqualTo(holderFence);
        assertThat(first.<Number>json("$.fence").longValue()).isEqualTo(waiterFences.get(0).longValue());
        assertThat(last.<Number>json("$.fence").longValue()).isEqualTo(waiterFences.get(1).longValue());
        assertThat(held.<Number>json("$.heldMillis").longValue()).isGreaterThanOrEqualTo(10_000);
        assertThat(first.<Number>json("$.heldMillis").longValue()).isGreaterThanOrEqualTo(1_000);
        // Served one after the other, in the order they queued.
        assertThat(instant(first, "acquiredAt")).isAfterOrEqualTo(instant(held, "releasedAt"));
        assertThat(instant(last, "acquiredAt")).isAfterOrEqualTo(instant(first, "releasedAt"));
        assertThat(first.<Number>json("$.waitedMillis").longValue()).isPositive();

        await().atMost(LONG).until(() -> holderOf(KEY) == null);
        assertThat(waiterOwners(KEY)).isEmpty();
    }

    @Test
    void holdTimeOutOfRangeOrNotANumberIsRefusedWithoutTakingTheLock() {
        long acquiredBefore = this.registry.getStatistics().getAcquired();
        for (String seconds : List.of("0", "-5", "61")) {
            Reply reply = this.http.post("/locks/" + KEY + "/hold?seconds=" + seconds);
            assertThat(reply.status()).as(reply.toString()).isEqualTo(400);
            assertThat(reply.<String>json("$.code")).isEqualTo("invalid-seconds");
            assertThat(reply.<String>json("$.detail")).isEqualTo("seconds must be between 1 and 60, got " + seconds);
        }
        Reply notANumber = this.http.post("/locks/" + KEY + "/hold?seconds=ten");
        assertThat(notANumber.status()).as(notANumber.toString()).isEqualTo(400);
        assertThat(notANumber.<String>json("$.code")).isEqualTo("invalid-seconds");
        assertThat(this.registry.getStatistics().getAcquired()).isEqualTo(acquiredBefore);
        assertThat(holderOf(KEY)).isNull();
    }

    private Object holderOf(String key) {
        Reply reply = this.http.get("/actuator/distributedlocks/" + key);
        assertThat(reply.status()).as(reply.toString()).isEqualTo(200);
        return reply.<Map<String, Object>>json("$").get("holder");
    }

    private List<String> waiterOwners(String key) {
        return this.http.get("/actuator/distributedlocks/" + key).json("$.waiters[*].owner");
    }

    private static Instant instant(Reply reply, String field) {
        return Instant.parse(reply.json("$." + field));
    }
}
