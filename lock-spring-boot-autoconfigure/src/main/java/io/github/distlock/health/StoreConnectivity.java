package io.github.distlock.health;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.InspectableLockRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.util.Assert;

/**
 * Whether a registry is connected to its lock store, for operations surfaces (health, the
 * {@code distributedlocks} endpoint) that must answer from what is known instead of waiting on
 * the store. Without a live session it runs one {@link InspectableLockRegistry#connect() connect
 * attempt} at a time in the background, shared by every caller, and remembers why the last
 * attempt failed until one succeeds or a session is lost (which was live after that failure).
 * Thread-safe.
 */
public final class StoreConnectivity {

    private final InspectableLockRegistry registry;

    /**
     * Guards the fields below. Not a monitor: {@link #check()} calls into the registry while holding
     * it, from request threads that may be virtual, which a monitor would pin on JDK 21 to 23.
     */
    private final ReentrantLock lock = new ReentrantLock();

    private @Nullable CompletableFuture<Void> attempt;

    private long attemptStartNanos;

    private @Nullable String lastFailure;

    /** The registry's count of lost sessions when {@link #lastFailure} was recorded. */
    private long sessionsLostAtFailure;

    /**
     * Creates a tracker; no attempt starts before the first check.
     * @param registry the registry whose connection is tracked
     */
    public StoreConnectivity(InspectableLockRegistry registry) {
        Assert.notNull(registry, "registry must not be null");
        this.registry = registry;
    }

    /**
     * What is known now, without waiting. Without a live session, starts a connect attempt in the
     * background unless one is running.
     * @return the connection state
     */
    public Connection check() {
        if (this.registry.isSessionAlive()) {
            return Connection.CONNECTED;
        }
        this.lock.lock();
        try {
            CompletableFuture<Void> attempt = this.attempt;
            if (attempt == null || attempt.isDone()) {
                // A finished attempt that succeeded still needs a new one: the session was lost since.
                this.attemptStartNanos = System.nanoTime();
                this.attempt = this.registry.connect().whenComplete(this::recordOutcome);
            }
            return current();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Like {@link #check()}, but while nothing is known yet (the first attempt is running, or the
     * first after a success or after a lost session) waits for that attempt until it has run for
     * {@code bound}. Callers that come later, or while a failure counts, do not wait.
     * @param bound how long an attempt may keep callers waiting
     * @return the connection state
     * @throws InterruptedException if interrupted while waiting
     */
    public Connection await(Duration bound) throws InterruptedException {
        Connection connection = check();
        if (connection.state() != State.CONNECTING) {
            return connection;
        }
        CompletableFuture<Void> attempt;
        long waitNanos;
        this.lock.lock();
        try {
            attempt = this.attempt;
            waitNanos = this.attemptStartNanos + bound.toNanos() - System.nanoTime();
        }
        finally {
            this.lock.unlock();
        }
        if (attempt != null && waitNanos > 0) {
            try {
                attempt.get(waitNanos, TimeUnit.NANOSECONDS);
            }
            catch (ExecutionException | TimeoutException ex) {
                // Reported below from the recorded outcome or as still connecting.
            }
        }
        return this.registry.isSessionAlive() ? Connection.CONNECTED : snapshot();
    }

    private Connection snapshot() {
        this.lock.lock();
        try {
            return current();
        }
        finally {
            this.lock.unlock();
        }
    }

    private Connection current() {
        if (this.lastFailure != null && sessionsLost() != this.sessionsLostAtFailure) {
            // A session was lost since, so one was live after the failure (an acquisition reconnected
            // without these attempts): the failure says nothing about the store now.
            this.lastFailure = null;
        }
        if (this.lastFailure != null) {
            return new Connection(State.UNREACHABLE, "could not connect to the lock store: " + this.lastFailure);
        }
        return new Connection(State.CONNECTING, "not connected to the lock store: a connect attempt is running");
    }

    private void recordOutcome(@Nullable Void connected, @Nullable Throwable failure) {
        this.lock.lock();
        try {
            this.lastFailure = (failure != null) ? describe(failure) : null;
            this.sessionsLostAtFailure = sessionsLost();
        }
        finally {
            this.lock.unlock();
        }
    }

    private long sessionsLost() {
        return this.registry.getStatistics().getSessionsLost();
    }

    /**
     * Says why a store call of the registry failed without naming endpoints: the registry's own
     * message names them, the store call failure it wraps names only the call and what went wrong.
     * @param failure a failure of the registry, possibly wrapped by a future
     * @return a one-line description
     */
    public static String describe(Throwable failure) {
        Throwable registryFailure = (failure instanceof CompletionException && failure.getCause() != null)
                ? failure.getCause() : failure;
        Throwable shown = (registryFailure.getCause() != null && registryFailure.getCause().getMessage() != null)
                ? registryFailure.getCause() : registryFailure;
        return (shown.getMessage() != null) ? shown.getMessage() : shown.getClass().getSimpleName();
    }

    /** How a registry stands with its lock store. */
    public enum State {

        /** The registry holds a live session. */
        CONNECTED,

        /**
         * No live session, and no attempt failed since the last success or the last lost session: an
         * attempt is running.
         */
        CONNECTING,

        /**
         * No live session, and the last connect attempt failed (no session was lost since); another one
         * runs in the background.
         */
        UNREACHABLE

    }

    /**
     * A connection state and why the registry is not connected.
     * @param state the state
     * @param reason why there is no session, without endpoints or credentials; {@code null} when
     * connected
     */
    public record Connection(State state, @Nullable String reason) {

        static final Connection CONNECTED = new Connection(State.CONNECTED, null);

    }
}
