package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The ZooKeeper servers the tests start: they serve, elect, survive a killed leader and come back. */
class ZooKeeperEnsembleIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(60);

    @Test
    void aStandaloneServerServesClientsAndIsGoneAfterClose() throws Exception {
        String address;
        try (ZooKeeperEnsemble zookeeper = ZooKeeperEnsemble.standalone()) {
            address = zookeeper.connectString();
            assertThat(zookeeper.member(0).mode()).isEqualTo("standalone");
            try (CuratorFramework client = client(zookeeper.connectString())) {
                String path = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/probe-", new byte[0]);
                assertThat(client.checkExists().forPath(path).getCzxid()).isPositive();
            }
            zookeeper.member(0).kill();
            assertThat(zookeeper.member(0).mode()).isNull();
            zookeeper.member(0).restart();
            assertThat(zookeeper.member(0).mode()).isEqualTo("standalone");
        }
        assertThat(address).startsWith("127.0.0.1:");
    }

    @Test
    void threeMembersElectALeaderAndElectAnotherWhenItIsKilled() throws Exception {
        try (ZooKeeperEnsemble zookeeper = ZooKeeperEnsemble.threeMembers()) {
            assertThat(zookeeper.size()).isEqualTo(3);
            int leader = zookeeper.leaderIndex();
            assertThat(leader).isNotNegative();
            try (CuratorFramework client = client(zookeeper.connectString())) {
                client.create().forPath("/before", new byte[] { 1 });
                zookeeper.member(leader).kill();
                await().atMost(LONG).until(() -> zookeeper.leaderIndex() >= 0 && zookeeper.leaderIndex() != leader);
                assertThat(client.getData().forPath("/before")).containsExactly(1);
                zookeeper.member(leader).restart();
                assertThat(zookeeper.member(leader).mode()).isEqualTo("follower");
            }
        }
    }

    private static CuratorFramework client(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, 10_000, 5_000, new RetryOneTime(100));
        client.start();
        assertThat(client.blockUntilConnected(30, TimeUnit.SECONDS)).isTrue();
        return client;
    }
}
