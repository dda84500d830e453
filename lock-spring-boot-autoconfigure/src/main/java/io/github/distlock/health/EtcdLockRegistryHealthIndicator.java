package io.github.distlock.health;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.health.StoreConnectivity.Connection;
import io.github.distlock.health.StoreConnectivity.State;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.util.Assert;

/**
 * Health of an {@link EtcdLockRegistry}: whether it holds a live etcd session, which every lock
 * it hands out depends on. A check never waits on etcd: it reports what the registry and the last
 * background connect attempt know, so a probe answers at once even while etcd is unreachable.
 * <ul>
 * <li>UP with {@code namespace}, {@code leaseTtl}, {@code sessionAlive} and
 * {@code sessionRenewalAge} while the session lease is renewed, and {@code grantedLeaseTtl} when
 * etcd granted a longer TTL than the configured one (its minimum);</li>
 * <li>UNKNOWN with {@code session: connecting} while the first session is being connected in
 * the background (the check starts that attempt if the application did not);</li>
 * <li>DOWN with {@code session: not started} and a {@code reason} when that attempt failed; the
 * check starts another one in the background and stays DOWN until one succeeds;</li>
 * <li>DOWN with a {@code reason} once the session is lost (its lease was not renewed within the
 * TTL), while a new one is connected in the background.</li>
 * </ul>
 * UNKNOWN while connecting, not DOWN: nothing failed yet, and UNKNOWN ranks below UP in Spring
 * Boot's default aggregation (DOWN, OUT_OF_SERVICE, UP, UNKNOWN), so a starting application is
 * not reported down for the second it takes to connect, and a Kubernetes readiness group that
 * includes this indicator answers HTTP 200 until an attempt has actually failed, then 503 until
 * etcd is reachable. Not UP either: nothing proves yet that locks can be taken. Keep it out of a
 * liveness group: restarting the application does not bring etcd back.
 * <p>
 * Details never include endpoints or credentials.
 */
public class EtcdLockRegistryHealthIndicator extends AbstractHealthIndicator {

    private final EtcdLockRegistry registry;

    private final StoreConnectivity connectivity;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     */
    public EtcdLockRegistryHealthIndicator(EtcdLockRegistry registry) {
        super("etcd lock registry health check failed");
        Assert.notNull(registry, "registry must not be null");
        this.registry = registry;
        this.connectivity = new StoreConnectivity(registry);
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("namespace", this.registry.getNamespace())
            .withDetail("leaseTtl", leaseTtl());
        Duration granted = this.registry.getGrantedLeaseTtl();
        if (granted != null && !granted.equals(this.registry.getLeaseTtl())) {
            // etcd raised it to its minimum: this, not the configured TTL, bounds how long a crashed holder blocks.
            builder.withDetail("grantedLeaseTtl", DurationStyle.SIMPLE.print(granted, ChronoUnit.SECONDS));
        }
        Duration renewalAge = this.registry.getSessionRenewalAge();
        Connection connection = this.connectivity.check();
        if (renewalAge == null) {
            reportFirstSession(builder, connection);
            return;
        }
        boolean alive = connection.state() == State.CONNECTED;
        builder.withDetail("sessionAlive", alive).withDetail("sessionRenewalAge", print(renewalAge));
        if (alive) {
            builder.up();
        }
        else {
            // The check above started a new session in the background, so that an idle application
            // reports UP again once etcd is back instead of waiting for its next acquisition.
            builder.down()
                .withDetail("reason", "the etcd session was lost: its lease was not renewed for "
                        + print(renewalAge) + " (TTL " + leaseTtl()
                        + "); reconnecting, locks cannot be held until etcd is reachable again");
        }
    }

    private void reportFirstSession(Health.Builder builder, Connection connection) {
        switch (connection.state()) {
            case CONNECTED -> builder.up();
            case CONNECTING -> builder.unknown().withDetail("session", "connecting");
            case UNREACHABLE -> builder.down()
                .withDetail("session", "not started")
                .withDetail("reason", connection.reason() + "; retrying in the background");
        }
    }

    /** The TTL is whole seconds by construction; shorter durations print as milliseconds. */
    private String leaseTtl() {
        return DurationStyle.SIMPLE.print(this.registry.getLeaseTtl(), ChronoUnit.SECONDS);
    }

    private static String print(Duration duration) {
        return DurationStyle.SIMPLE.print(duration);
    }
}
