package io.github.distlock.testsupport;

import java.util.List;
import java.util.function.Supplier;

import io.etcd.jetcd.Client;

/**
 * Starts an {@link EtcdCluster} once per test class and closes it after the class (see
 * {@link ClassScopedServerExtension}):
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdClusterExtension etcd = EtcdClusterExtension.single();
 * }</pre>
 * Tests that kill or pause members of a shared cluster should call
 * {@code etcd.cluster().ensureAllRunning()} in {@code @AfterEach}.
 */
public final class EtcdClusterExtension extends ClassScopedServerExtension<EtcdCluster> {

    private EtcdClusterExtension(Supplier<EtcdCluster> clusterFactory) {
        super(clusterFactory, "The etcd cluster is not running: register EtcdClusterExtension "
                + "on a static field with @RegisterExtension and use it inside the test class");
    }

    /** An extension that starts a one-member cluster. */
    public static EtcdClusterExtension single() {
        return new EtcdClusterExtension(EtcdCluster::single);
    }

    /** An extension that starts a three-member cluster. */
    public static EtcdClusterExtension threeMembers() {
        return new EtcdClusterExtension(EtcdCluster::threeMembers);
    }

    /** The running cluster; only available between the class's {@code beforeAll} and {@code afterAll}. */
    public EtcdCluster cluster() {
        return running();
    }

    /** Shortcut for {@code cluster().clientEndpoints()}. */
    public List<String> clientEndpoints() {
        return cluster().clientEndpoints();
    }

    /** Shortcut for {@code cluster().newClient()}; the caller closes the client. */
    public Client newClient() {
        return cluster().newClient();
    }
}
