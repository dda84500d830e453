package io.github.distlock.health;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.core.LockCounters;
import io.github.distlock.health.StoreConnectivity.Connection;
import io.github.distlock.health.StoreConnectivity.State;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link StoreConnectivity} remembers of its connect attempts, on a registry whose session and
 * attempts the test decides (the stores' own tests show the attempts against real servers).
 */
class StoreConnectivityTests {

    private final AtomicBoolean sessionAlive = new AtomicBoolean();

    private final List<CompletableFuture<Void>> attempts = new CopyOnWriteArrayList<>();

    private final LockCounters statistics = new LockCounters();

    private final StoreConnectivity connectivity = new StoreConnectivity(registry());

    @Test
    void aFailedAttemptIsReportedUntilAnAttemptSucceeds() {
        assertThat(this.connectivity.check().state()).isEqualTo(State.CONNECTING);
        lastAttempt().completeExceptionally(new IllegalStateException("lease grant got no answer within 500 ms"));
        Connection unreachable = new Connection(State.UNREACHABLE,
                "could not connect to the lock store: lease grant got no answer within 500 ms");
        // Each check after a finished attempt starts another; the failure stands meanwhile.
        assertThat(this.connectivity.check()).isEqualTo(unreachable);
        assertThat(this.attempts).hasSize(2);
        assertThat(this.connectivity.check()).isEqualTo(unreachable);
        assertThat(this.attempts).hasSize(2);
        lastAttempt().complete(null);
        this.sessionAlive.set(true);
        assertThat(this.connectivity.check().state()).isEqualTo(State.CONNECTED);
        this.sessionAlive.set(false);
        assertThat(this.connectivity.check().state()).isEqualTo(State.CONNECTING);
    }

    /**
     * A session lost after the failure was live after it (an acquisition connected while this
     * tracker's own attempt was still running): the failure says nothing about the store now.
     */
    @Test
    void aFailureFromBeforeALostSessionIsNoLongerReported() {
        this.connectivity.check();
        lastAttempt().completeExceptionally(new IllegalStateException("lease grant got no answer within 500 ms"));
        assertThat(this.connectivity.check().state()).isEqualTo(State.UNREACHABLE);
        this.sessionAlive.set(true);
        assertThat(this.connectivity.check().state()).isEqualTo(State.CONNECTED);
        this.sessionAlive.set(false);
        this.statistics.sessionLost();
        assertThat(this.connectivity.check()).isEqualTo(new Connection(State.CONNECTING,
                "not connected to the lock store: a connect attempt is running"));
        // A failure after the loss is reported again.
        lastAttempt().completeExceptionally(new IllegalStateException("connection refused"));
        assertThat(this.connectivity.check()).isEqualTo(new Connection(State.UNREACHABLE,
                "could not connect to the lock store: connection refused"));
    }

    private CompletableFuture<Void> lastAttempt() {
        return this.attempts.get(this.attempts.size() - 1);
    }

    /** Answers what the tracker asks; anything else is not part of these tests. */
    private InspectableLockRegistry registry() {
        return (InspectableLockRegistry) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { InspectableLockRegistry.class }, (proxy, method, args) -> switch (method.getName()) {
                    case "isSessionAlive" -> this.sessionAlive.get();
                    case "getStatistics" -> this.statistics.statistics();
                    case "connect" -> {
                        CompletableFuture<Void> attempt = new CompletableFuture<>();
                        this.attempts.add(attempt);
                        yield attempt;
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
