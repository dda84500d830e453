package io.github.distlock.fault;

import io.github.distlock.testsupport.TestStore;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A paused holder on ZooKeeper: its session expires, another process takes over, the fence rejects the stale write. */
class ZookeeperPausedHolderIntegrationTests extends AbstractPausedHolderTests {

    private static ZooKeeperEnsemble zookeeper;

    @BeforeAll
    static void startZookeeper() {
        zookeeper = ZooKeeperEnsemble.standalone();
    }

    @AfterAll
    static void stopZookeeper() {
        zookeeper.close();
    }

    @Override
    protected TestStore openStore() {
        return TestStore.open("zookeeper=" + zookeeper.connectString());
    }
}
