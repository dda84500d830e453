package io.github.distlock.testsupport;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a standalone {@link ZooKeeperEnsemble} once per test class and closes it after the class.
 * Register it on a {@code static} field, since it uses class-level callbacks:
 * <pre>{@code
 * @RegisterExtension
 * static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();
 * }</pre>
 * Static {@code @BeforeAll} methods of the class run after it, so they may use {@link #ensemble()}.
 * Tests that need a three-member ensemble start their own, per test.
 */
public final class ZooKeeperEnsembleExtension implements BeforeAllCallback, AfterAllCallback {

    private ZooKeeperEnsemble ensemble;

    /** The class whose {@code beforeAll} started the server: only its {@code afterAll} closes it. */
    private String ownerId;

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        if (this.ensemble == null) {
            this.ensemble = ZooKeeperEnsemble.standalone();
            this.ownerId = context.getUniqueId();
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        if (this.ensemble != null && context.getUniqueId().equals(this.ownerId)) {
            try {
                this.ensemble.close();
            }
            finally {
                this.ensemble = null;
                this.ownerId = null;
            }
        }
    }

    /** @return the running standalone server */
    public synchronized ZooKeeperEnsemble ensemble() {
        if (this.ensemble == null) {
            throw new IllegalStateException("The ZooKeeper server runs only while its test class does: register "
                    + "ZooKeeperEnsembleExtension on a static field with @RegisterExtension");
        }
        return this.ensemble;
    }

    /** Shortcut for {@code ensemble().connectString()}. */
    public String connectString() {
        return ensemble().connectString();
    }
}
