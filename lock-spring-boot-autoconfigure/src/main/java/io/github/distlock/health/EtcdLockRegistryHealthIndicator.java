package io.github.distlock.health;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.etcd.EtcdLockRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.util.Assert;

/**
 * Health of an {@link EtcdLockRegistry}: whether it holds a live etcd session, which every lock
 * it hands out depends on.
 * <ul>
 * <li>UP with {@code namespace}, {@code leaseTtl}, {@code sessionAlive} and
 * {@code sessionRenewalAge} while the session lease is renewed;</li>
 * <li>before any lock was taken there is no session yet: UP with {@code session: not started} if
 * etcd can be connected to within the connect bound, DOWN with a {@code reason} otherwise;</li>
 * <li>DOWN with a {@code reason} once the session is lost (its lease was not renewed within the
 * TTL), until an acquisition starts a new one.</li>
 * </ul>
 * Details never include endpoints or credentials.
 */
public class EtcdLockRegistryHealthIndicator extends AbstractHealthIndicator {

    private final EtcdLockRegistry registry;

    private final Duration connectBound;

    private @Nullable CompletableFuture<Void> connecting;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     * @param connectBound how long a check waits for etcd when no session was started yet
     */
    public EtcdLockRegistryHealthIndicator(EtcdLockRegistry registry, Duration connectBound) {
        super("etcd lock registry health check failed");
        Assert.notNull(registry, "registry must not be null");
        Assert.isTrue(connectBound != null && !connectBound.isNegative(), "connectBound must not be negative");
        this.registry = registry;
        this.connectBound = connectBound;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        builder.withDetail("namespace", this.registry.getNamespace())
            .withDetail("leaseTtl", leaseTtl());
        Duration renewalAge = this.registry.getSessionRenewalAge();
        if (renewalAge == null) {
            checkConnect(builder);
            return;
        }
        boolean alive = this.registry.isSessionAlive();
        builder.withDetail("sessionAlive", alive).withDetail("sessionRenewalAge", print(renewalAge));
        if (alive) {
            builder.up();
        }
        else {
            // Start a new session in the background, so that an idle application reports UP again
            // once etcd is back instead of waiting for its next acquisition.
            connecting();
            builder.down()
                .withDetail("reason", "the etcd session was lost: its lease was not renewed for "
                        + print(renewalAge) + " (TTL " + leaseTtl()
                        + "); reconnecting, locks cannot be held until etcd is reachable again");
        }
    }

    private void checkConnect(Health.Builder builder) throws InterruptedException {
        builder.withDetail("session", "not started");
        try {
            connecting().get(this.connectBound.toNanos(), TimeUnit.NANOSECONDS);
            builder.up();
        }
        catch (TimeoutException ex) {
            builder.down()
                .withDetail("reason", "etcd could not be connected to within " + print(this.connectBound));
        }
        catch (ExecutionException ex) {
            Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
            builder.down().withDetail("reason", String.valueOf(cause.getMessage()));
        }
    }

    /**
     * Checks share one connect attempt while it runs: an endpoint polled often must not pile up
     * attempts that each keep trying for a request timeout after the check gave up.
     */
    private synchronized CompletableFuture<Void> connecting() {
        CompletableFuture<Void> connecting = this.connecting;
        if (connecting == null || connecting.isDone()) {
            connecting = this.registry.connect();
            this.connecting = connecting;
        }
        return connecting;
    }

    /** The TTL is whole seconds by construction; shorter durations print as milliseconds. */
    private String leaseTtl() {
        return DurationStyle.SIMPLE.print(this.registry.getLeaseTtl(), ChronoUnit.SECONDS);
    }

    private static String print(Duration duration) {
        return DurationStyle.SIMPLE.print(duration);
    }
}
