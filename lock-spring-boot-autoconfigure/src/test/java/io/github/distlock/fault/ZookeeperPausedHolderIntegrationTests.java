package io.github.distlock.fault;

import io.github.distlock.testsupport.TestStore;
import io.github.distlock.testsupport.ZooKeeperEnsembleExtension;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A paused holder on ZooKeeper: its session expires, another process takes over, the fence rejects the stale write. */
class ZookeeperPausedHolderIntegrationTests extends AbstractPausedHolderTests {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    @Override
    protected TestStore openStore() {
        return TestStore.open("zookeeper=" + zookeeper.connectString());
    }
}
