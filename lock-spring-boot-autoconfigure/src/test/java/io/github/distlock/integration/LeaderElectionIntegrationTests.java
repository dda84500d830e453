package io.github.distlock.integration;

import io.github.distlock.testsupport.EtcdClusterExtension;
import io.github.distlock.testsupport.TestStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Leader election on etcd: a crashed or frozen leader's lease ends after the lease TTL. */
class LeaderElectionIntegrationTests extends AbstractLeaderElectionTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    @Override
    protected TestStore openStore() {
        return TestStore.open("etcd=" + String.join(",", etcd.clientEndpoints()));
    }
}
