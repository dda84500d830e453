package io.github.distlock.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Proves that the test support really starts, breaks and cleans up etcd members and child JVMs.
 */
class EtcdClusterIntegrationTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.threeMembers();

    @AfterEach
    void restoreCluster() {
        etcd.cluster().ensureAllRunning();
    }

    @Test
    void singleMemberServesWritesAndCloseRemovesProcessAndData() throws Exception {
        EtcdCluster single = EtcdCluster.single();
        EtcdCluster.Member member = single.member(0);
        try (single) {
            try (Client client = single.newClient()) {
                put(client, "single", "value");
                assertThat(get(client, "single")).isEqualTo("value");
            }
            assertThat(member.dataDir()).isDirectory();
            // close() must also end a member that is frozen.
            member.pause();
            assertThat(member.isPaused()).isTrue();
        }
        assertThat(member.isRunning()).isFalse();
        assertThat(ProcessHandle.of(member.pid()).filter(ProcessHandle::isAlive)).isEmpty();
        assertThat(member.dataDir().getParent()).doesNotExist();
        single.close();
    }

    @Test
    void killedLeaderIsReplacedAndRejoinsAfterRestart() throws Exception {
        EtcdCluster cluster = etcd.cluster();
        int oldLeaderIndex = cluster.awaitLeader(TIMEOUT);
        EtcdCluster.Member oldLeader = cluster.member(oldLeaderIndex);

        oldLeader.kill();
        assertThat(oldLeader.isRunning()).isFalse();
        int newLeaderIndex = cluster.awaitLeader(TIMEOUT);
        assertThat(newLeaderIndex).isNotEqualTo(oldLeaderIndex);
        try (Client client = cluster.member(newLeaderIndex).newClient()) {
            put(client, "failover", "written-without-old-leader");
        }

        oldLeader.restart();
        assertThat(oldLeader.isRunning()).isTrue();
        // A linearizable read served by the restarted member shows it caught up with the cluster.
        try (Client client = oldLeader.newClient()) {
            assertThat(get(client, "failover")).isEqualTo("written-without-old-leader");
        }
    }

    @Test
    void pausedFollowerCatchesUpAfterResume() throws Exception {
        EtcdCluster cluster = etcd.cluster();
        int leaderIndex = cluster.awaitLeader(TIMEOUT);
        EtcdCluster.Member follower = cluster.member((leaderIndex + 1) % cluster.size());

        follower.pause();
        assertThat(follower.isPaused()).isTrue();
        // A client of the paused member would hang until its deadline, so write through the leader only.
        try (Client client = cluster.member(leaderIndex).newClient()) {
            put(client, "paused-follower", "written-while-paused");
        }

        follower.resume();
        assertThat(follower.isPaused()).isFalse();
        try (Client client = follower.newClient()) {
            assertThat(get(client, "paused-follower")).isEqualTo("written-while-paused");
        }
    }

    @Test
    void pausedLeaderIsReplacedAndStepsDownAfterResume() {
        EtcdCluster cluster = etcd.cluster();
        int oldLeaderIndex = cluster.awaitLeader(TIMEOUT);
        EtcdCluster.Member oldLeader = cluster.member(oldLeaderIndex);

        oldLeader.pause();
        int newLeaderIndex = cluster.awaitLeader(TIMEOUT);
        assertThat(newLeaderIndex).isNotEqualTo(oldLeaderIndex);

        // On resume the old leader briefly still claims to lead, in an outdated term. awaitLeader() now
        // asks it too, so returning means all three members agree on one leader again.
        oldLeader.resume();
        cluster.awaitLeader(TIMEOUT);
    }

    @Test
    void childJvmEchoesPausesAndIsKilled() {
        try (JvmProcess child = JvmProcess.start(EchoMain.class)) {
            assertThat(child.awaitLine(line -> line.startsWith("ready "), TIMEOUT)).isEqualTo("ready " + child.pid());
            child.sendLine("hello");
            child.awaitLine("echo: hello"::equals, TIMEOUT);

            child.pause();
            child.sendLine("sent while paused");
            // pause() returns only once the child is stopped, so it cannot have answered yet.
            assertThat(child.lines()).doesNotContain("echo: sent while paused");
            child.resume();
            child.awaitLine("echo: sent while paused"::equals, TIMEOUT);

            child.kill();
            assertThat(child.waitFor(TIMEOUT)).isEqualTo(128 + 9);
            assertThat(child.isAlive()).isFalse();
        }
    }

    @Test
    void childJvmExitsOnTerminateAndCloseKillsARunningOne() {
        try (JvmProcess terminated = JvmProcess.start(EchoMain.class)) {
            terminated.awaitLine(line -> line.startsWith("ready "), TIMEOUT);
            terminated.terminate();
            assertThat(terminated.waitFor(TIMEOUT)).isEqualTo(128 + 15);
            assertThat(terminated.lines()).contains("shutting down");
        }
        JvmProcess running = JvmProcess.start(EchoMain.class);
        running.awaitLine(line -> line.startsWith("ready "), TIMEOUT);
        running.close();
        assertThat(ProcessHandle.of(running.pid()).filter(ProcessHandle::isAlive)).isEmpty();
    }

    private static void put(Client client, String key, String value) throws Exception {
        client.getKVClient().put(bytes(key), bytes(value)).get(10, TimeUnit.SECONDS);
    }

    private static String get(Client client, String key) throws Exception {
        GetResponse response = client.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS);
        return response.getKvs().isEmpty() ? null
                : response.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8);
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

}
