package io.github.distlock.health;

import java.time.Duration;

import io.github.distlock.etcd.EtcdLockRegistry;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of an {@link EtcdLockRegistry}, as {@link LockRegistryHealthIndicator} reports it, with
 * the session lease's {@code leaseTtl}, and {@code grantedLeaseTtl} when etcd granted a longer TTL
 * than the configured one (its minimum): that one, not the configured one, bounds how long a
 * crashed holder blocks others. Details never include endpoints or credentials.
 */
public class EtcdLockRegistryHealthIndicator extends LockRegistryHealthIndicator {

    private final EtcdLockRegistry registry;

    /**
     * Creates an indicator.
     * @param registry the registry to check
     */
    public EtcdLockRegistryHealthIndicator(EtcdLockRegistry registry) {
        super(registry, "etcd");
        this.registry = registry;
    }

    @Override
    protected Duration getLeaseTtl() {
        return this.registry.getLeaseTtl();
    }

    @Override
    protected Duration getBoundingLeaseTtl() {
        Duration granted = this.registry.getGrantedLeaseTtl();
        return (granted != null) ? granted : this.registry.getLeaseTtl();
    }

    @Override
    protected void storeDetails(Health.Builder builder) {
        Duration granted = this.registry.getGrantedLeaseTtl();
        if (granted != null && !granted.equals(this.registry.getLeaseTtl())) {
            builder.withDetail("grantedLeaseTtl", print(granted));
        }
    }
}
