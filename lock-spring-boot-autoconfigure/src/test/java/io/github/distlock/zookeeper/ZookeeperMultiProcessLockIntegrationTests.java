package io.github.distlock.zookeeper;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.TestStore;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The multi-process guarantees on one ZooKeeper server; a registry's TTL is its client's session timeout. */
class ZookeeperMultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    @Override
    protected TestStore openStore() {
        return TestStore.open("zookeeper=" + zookeeper.connectString());
    }
}
