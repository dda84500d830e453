package io.github.distlock.testsupport;

/**
 * Starts a standalone {@link ZooKeeperEnsemble} once per test class and closes it after the class
 * (see {@link ClassScopedServerExtension}):
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();
 * }</pre>
 * Tests that need a three-member ensemble start their own, per test.
 */
public final class ZooKeeperEnsembleExtension extends ClassScopedServerExtension<ZooKeeperEnsemble> {

    public ZooKeeperEnsembleExtension() {
        super(ZooKeeperEnsemble::standalone, "The ZooKeeper server runs only while its test class does: register "
                + "ZooKeeperEnsembleExtension on a static field with @RegisterExtension");
    }

    /** @return the running standalone server */
    public ZooKeeperEnsemble ensemble() {
        return running();
    }

    /** Shortcut for {@code ensemble().connectString()}. */
    public String connectString() {
        return ensemble().connectString();
    }
}
