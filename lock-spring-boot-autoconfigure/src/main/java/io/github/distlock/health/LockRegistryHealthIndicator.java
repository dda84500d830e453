package io.github.distlock.health;

import java.time.Duration;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.health.StoreConnectivity.Connection;
import io.github.distlock.health.StoreConnectivity.State;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.util.Assert;

/**
 * Health of any {@link InspectableLockRegistry}: whether it holds a live session with its lock
 * store, which every lock it hands out depends on. A check never waits on the store: it reports
 * what the registry and the last background connect attempt know, so a probe answers at once even
 * while the store is unreachable.
 * <ul>
 * <li>UP with {@code namespace}, {@code sessionAlive} and {@code sessionRenewalAge} while the
 * session is renewed (and {@code leaseTtl} where the store has one);</li>
 * <li>UNKNOWN with {@code session: connecting} while the first session is being connected in
 * the background (the check starts that attempt if the application did not);</li>
 * <li>DOWN with {@code session: not started} and a {@code reason} when that attempt failed; the
 * check starts another one in the background and stays DOWN until one succeeds;</li>
 * <li>DOWN with a {@code reason} once the session is lost (it was not renewed within its TTL),
 * while a new one is connected in the background.</li>
 * </ul>
 * UNKNOWN while connecting, not DOWN: nothing failed yet, and UNKNOWN ranks below UP in Spring
 * Boot's default aggregation (DOWN, OUT_OF_SERVICE, UP, UNKNOWN), so a starting application is
 * not reported down for the second it takes to connect, and a Kubernetes readiness group that
 * includes this indicator answers HTTP 200 until an attempt has actually failed, then 503 until
 * the store is reachable. Not UP either: nothing proves yet that locks can be taken. Keep it out
 * of a liveness group: restarting the application does not bring the store back.
 * <p>
 * A store's indicator adds what only that store knows by overriding {@link #getLeaseTtl()} and
 * {@link #storeDetails(Health.Builder)}. Details never include credentials.
 */
public class LockRegistryHealthIndicator extends AbstractHealthIndicator {

    private final InspectableLockRegistry registry;

    private final String store;

    private final StoreConnectivity connectivity;

    /**
     * Creates an indicator for a registry of any store.
     * @param registry the registry to check
     */
    public LockRegistryHealthIndicator(InspectableLockRegistry registry) {
        this(registry, "lock store");
    }

    /**
     * Creates an indicator.
     * @param registry the registry to check
     * @param store the store's name in reasons, for example {@code etcd}
     */
    protected LockRegistryHealthIndicator(InspectableLockRegistry registry, String store) {
        super(store + " lock registry health check failed");
        Assert.notNull(registry, "registry must not be null");
        this.registry = registry;
        this.store = store;
        this.connectivity = new StoreConnectivity(registry);
    }

    @Override
    protected final void doHealthCheck(Health.Builder builder) {
        builder.withDetail("namespace", this.registry.getNamespace());
        Duration leaseTtl = getLeaseTtl();
        if (leaseTtl != null) {
            builder.withDetail("leaseTtl", print(leaseTtl));
        }
        storeDetails(builder);
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
            // reports UP again once the store is back instead of waiting for its next acquisition.
            Duration boundingTtl = getBoundingLeaseTtl();
            String ttl = (boundingTtl != null) ? " (TTL " + print(boundingTtl) + ")" : "";
            builder.down()
                .withDetail("reason", "the " + this.store + " session was lost: it was not renewed for "
                        + print(renewalAge) + ttl + "; reconnecting, locks cannot be held until " + this.store
                        + " is reachable again");
        }
    }

    /**
     * The configured TTL, which bounds how long a crashed holder blocks others and how long a holder
     * cut off from the store believes it holds (unless the store applies another, see
     * {@link #getBoundingLeaseTtl()}): shown as {@code leaseTtl}.
     * @return the lease TTL, or {@code null} if the store has none (the default)
     */
    protected @Nullable Duration getLeaseTtl() {
        return null;
    }

    /**
     * The TTL the store actually applies, where it may differ from {@link #getLeaseTtl()} (etcd
     * grants at least its minimum): named in the reason of a lost session.
     * @return that TTL; {@link #getLeaseTtl()} by default
     */
    protected @Nullable Duration getBoundingLeaseTtl() {
        return getLeaseTtl();
    }

    /**
     * Adds details that only this store has, after {@code namespace} and {@code leaseTtl}.
     * Nothing by default.
     * @param builder the health being built
     */
    protected void storeDetails(Health.Builder builder) {
    }

    /** @return the registry this indicator checks */
    protected InspectableLockRegistry getRegistry() {
        return this.registry;
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

    /** Whole seconds as {@code 10s}, anything else in milliseconds ({@code 1500ms}). */
    static String print(Duration duration) {
        return (duration.toNanos() % 1_000_000_000L == 0) ? duration.toSeconds() + "s"
                : DurationStyle.SIMPLE.print(duration);
    }
}
