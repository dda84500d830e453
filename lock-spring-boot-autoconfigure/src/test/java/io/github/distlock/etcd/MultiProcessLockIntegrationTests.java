package io.github.distlock.etcd;

import io.github.distlock.AbstractMultiProcessLockTests;
import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The multi-process guarantees on one etcd. */
class MultiProcessLockIntegrationTests extends AbstractMultiProcessLockTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @Override
    protected TestStore openStore() {
        return TestStore.open("etcd=" + String.join(",", etcd.clientEndpoints()));
    }
}
