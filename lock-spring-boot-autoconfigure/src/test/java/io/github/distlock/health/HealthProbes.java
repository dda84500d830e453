package io.github.distlock.health;

import java.time.Duration;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/** Probes of a lock registry's health indicator, shared by the stores' health tests. */
final class HealthProbes {

    private HealthProbes() {
    }

    /** A probe, which must answer from what is known instead of waiting on the store. */
    static Health quickHealth(HealthIndicator indicator) {
        long start = System.nanoTime();
        Health health = indicator.health();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("probe answered " + health)
            .isLessThan(Duration.ofMillis(500));
        return health;
    }

    static boolean isAlive(Health health) {
        return health.getStatus().equals(Status.UP) && Boolean.TRUE.equals(health.getDetails().get("sessionAlive"));
    }
}
