package io.github.distlock.sample.hold;

import java.time.Duration;
import java.time.Instant;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.sample.SampleProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

/**
 * Takes a lock key fairly and keeps it for a while, doing nothing else. Requests for one key are
 * served in the order they arrived, across all instances; each waits at most
 * {@code sample.hold.wait-timeout}, then fails with
 * {@link io.github.distlock.LockAcquisitionException} naming the holder (409).
 */
@Service
public class LockHoldService {

    private static final Logger logger = LoggerFactory.getLogger(LockHoldService.class);

    private final String instance;

    public LockHoldService(SampleProperties properties) {
        this.instance = properties.instanceName();
    }

    /**
     * Holds {@code key} for {@code time}.
     * @param requestedAt when the request arrived, to tell how long it waited
     * @return what the hold was
     * @throws InterruptedException if the thread is interrupted while it holds the lock
     */
    @DistributedLock(key = "#key", fair = true, waitTimeout = "${sample.hold.wait-timeout}")
    public Hold hold(String key, Duration time, Instant requestedAt) throws InterruptedException {
        Instant acquiredAt = Instant.now();
        long fence = LockContext.currentFence();
        logger.info("Holding lock '{}' (fence {}) on {} for {} ms", key, fence, this.instance, time.toMillis());
        Thread.sleep(time.toMillis());
        Instant releasedAt = Instant.now();
        logger.info("Releasing lock '{}' (fence {}) on {}", key, fence, this.instance);
        return new Hold(key, fence, this.instance, Thread.currentThread().getName(), requestedAt, acquiredAt,
                releasedAt, Duration.between(requestedAt, acquiredAt).toMillis(),
                Duration.between(acquiredAt, releasedAt).toMillis());
    }

    /**
     * One hold, as answered to the client.
     * @param key the lock key
     * @param fence the hold's fence
     * @param heldBy the instance that held it
     * @param thread the thread that held it (as {@code /actuator/distributedlocks} shows it)
     * @param requestedAt when the request arrived
     * @param acquiredAt when the lock was acquired
     * @param releasedAt when the hold ended (the lock is released right after)
     * @param waitedMillis time from the request's arrival to the acquisition
     * @param heldMillis time from the acquisition to the release
     */
    public record Hold(String key, long fence, String heldBy, String thread, Instant requestedAt, Instant acquiredAt,
            Instant releasedAt, long waitedMillis, long heldMillis) {
    }
}
