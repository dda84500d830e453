package io.github.distlock.zookeeper;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.TestStore;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-process guarantees on one ZooKeeper server; a registry's TTL is its client's session timeout. */
class ZookeeperMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

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
