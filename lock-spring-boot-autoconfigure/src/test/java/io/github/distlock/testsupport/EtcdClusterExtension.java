package io.github.distlock.testsupport;

import java.util.List;
import java.util.function.Supplier;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts an {@link EtcdCluster} once per test class and closes it after the class. Register it on
 * a {@code static} field, since it uses class-level callbacks:
 * <pre>{@code
 * @RegisterExtension
 * static final EtcdClusterExtension etcd = EtcdClusterExtension.single();
 * }</pre>
 * {@code @Nested} classes share the outer class's cluster. Tests that kill or pause members of a
 * shared cluster should call {@code etcd.cluster().ensureAllRunning()} in {@code @AfterEach}.
 */
public final class EtcdClusterExtension implements BeforeAllCallback, AfterAllCallback {

    private final Supplier<EtcdCluster> clusterFactory;

    private EtcdCluster cluster;

    /** The class whose {@code beforeAll} started the cluster: only its {@code afterAll} closes it. */
    private String ownerId;

    private EtcdClusterExtension(Supplier<EtcdCluster> clusterFactory) {
        this.clusterFactory = clusterFactory;
    }

    /** An extension that starts a one-member cluster. */
    public static EtcdClusterExtension single() {
        return new EtcdClusterExtension(EtcdCluster::single);
    }

    /** An extension that starts a three-member cluster. */
    public static EtcdClusterExtension threeMembers() {
        return new EtcdClusterExtension(EtcdCluster::threeMembers);
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (this.cluster == null) {
            this.cluster = this.clusterFactory.get();
            this.ownerId = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (this.cluster != null && context.getUniqueId().equals(this.ownerId)) {
            try {
                this.cluster.close();
            }
            finally {
                this.cluster = null;
                this.ownerId = null;
            }
        }
    }

    /** The running cluster; only available between the class's {@code beforeAll} and {@code afterAll}. */
    public synchronized EtcdCluster cluster() {
        if (this.cluster == null) {
            throw new IllegalStateException("The etcd cluster is not running: register EtcdClusterExtension "
                    + "on a static field with @RegisterExtension and use it inside the test class");
        }
        return this.cluster;
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
