package io.github.distlock.sample.hold;

import java.time.Duration;
import java.time.Instant;

import io.github.distlock.sample.SampleProperties;
import io.github.distlock.sample.hold.LockHoldService.Hold;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /locks/{key}/hold?seconds=N}: waits for the lock {@code key} (fair, at most
 * {@code sample.hold.wait-timeout}), holds it {@code N} seconds (1 to
 * {@code sample.hold.max-time}, default 10), then answers with the fence and the times. Several
 * such requests, to one or more instances, make a queue that {@code /actuator/distributedlocks}
 * shows. Any key works, also one the application uses (an order id makes its payments wait).
 */
@RestController
class LockHoldController {

    private final LockHoldService service;

    private final Duration maxTime;

    LockHoldController(LockHoldService service, SampleProperties properties) {
        this.service = service;
        this.maxTime = properties.hold().maxTime();
    }

    @PostMapping("/locks/{key}/hold")
    Hold hold(@PathVariable String key, @RequestParam(defaultValue = "10") int seconds) throws InterruptedException {
        Instant requestedAt = Instant.now();
        if (seconds < 1 || seconds > this.maxTime.toSeconds()) {
            throw new InvalidHoldTimeException(
                    "seconds must be between 1 and " + this.maxTime.toSeconds() + ", got " + seconds);
        }
        return this.service.hold(key, Duration.ofSeconds(seconds), requestedAt);
    }
}
