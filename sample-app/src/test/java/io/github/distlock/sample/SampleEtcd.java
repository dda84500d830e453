package io.github.distlock.sample;

import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A one-member etcd per test class, for {@code @SpringBootTest} classes. Declared with
 * {@code @ExtendWith(SampleEtcd.class)} before {@code @SpringBootTest}, it is registered before
 * Spring's extension, so etcd starts before the application context and stops after the context
 * is closed ({@code @DirtiesContext}): the application can release its lease on shutdown.
 */
public final class SampleEtcd implements BeforeAllCallback, AfterAllCallback {

    private static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    /** The running cluster of the current test class. */
    public static EtcdCluster cluster() {
        return etcd.cluster();
    }

    /** The client endpoints, comma-separated, for {@code distributed-lock.etcd.endpoints}. */
    public static String endpoints() {
        return String.join(",", etcd.clientEndpoints());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        etcd.beforeAll(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        etcd.afterAll(context);
    }
}
