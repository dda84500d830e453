package io.github.distlock.fault;

import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A paused holder on etcd. */
class PausedHolderIntegrationTests extends AbstractPausedHolderTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @Override
    protected TestStore openStore() {
        return TestStore.open("etcd=" + String.join(",", etcd.clientEndpoints()));
    }
}
