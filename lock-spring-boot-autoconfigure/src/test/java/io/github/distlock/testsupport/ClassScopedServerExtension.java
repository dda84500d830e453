package io.github.distlock.testsupport;

import java.util.function.Supplier;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts a server once per test class and closes it after the class: what the server extensions
 * share. They use class-level callbacks, so they are registered on a {@code static} field; static
 * {@code @BeforeAll} methods of the class run after the start, so they may use the server.
 * {@code @Nested} classes share the outer class's server: only the class that started it closes it.
 *
 * @param <S> the server
 */
abstract class ClassScopedServerExtension<S extends AutoCloseable> implements BeforeAllCallback, AfterAllCallback {

    private final Supplier<S> starter;

    private final String notRunning;

    private S server;

    /** The class whose {@code beforeAll} started the server: only its {@code afterAll} closes it. */
    private String ownerId;

    /**
     * @param starter starts the server
     * @param notRunning the message of the failure when the server is asked for outside its class's run
     */
    ClassScopedServerExtension(Supplier<S> starter, String notRunning) {
        this.starter = starter;
        this.notRunning = notRunning;
    }

    @Override
    public final synchronized void beforeAll(ExtensionContext context) {
        if (this.server == null) {
            this.server = this.starter.get();
            this.ownerId = context.getUniqueId();
        }
    }

    @Override
    public final synchronized void afterAll(ExtensionContext context) {
        if (this.server != null && context.getUniqueId().equals(this.ownerId)) {
            try {
                this.server.close();
            }
            catch (RuntimeException ex) {
                throw ex;
            }
            catch (Exception ex) {
                // None of the servers declares one; an extension called by hand need not handle it either.
                throw new IllegalStateException("Closing " + this.server + " failed", ex);
            }
            finally {
                this.server = null;
                this.ownerId = null;
            }
        }
    }

    /** @return the running server, between its class's {@code beforeAll} and {@code afterAll} */
    final synchronized S running() {
        if (this.server == null) {
            throw new IllegalStateException(this.notRunning);
        }
        return this.server;
    }
}
