package io.github.distlock.bench;

import java.time.Duration;

import io.github.distlock.redis.RedisLockRegistry;
import io.lettuce.core.RedisClient;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * A contender in its own JVM for the Redis benchmarks: one Lettuce client with one registry, and
 * one Redisson client, driven over stdin.
 *
 * <p>Arguments: {@code <redis uri> <namespace> <lease ttl millis> <name>}. Commands, one per line:
 * {@code LOOP <run> <fair|unfair|redisson-lock|redisson-fair> <key> <window start> <window end>
 * <stop at> <file>}: acquire and release {@code key} back to back with an empty critical section
 * until {@code stop at}, write {@code <acquired> <released>} for every acquisition that returned
 * inside the window to {@code file}, then print {@code DONE <run> <count>}. Times are
 * {@link System#nanoTime()} values, the machine's monotonic clock in every JVM on Linux. The JVM
 * exits when its stdin ends.
 */
public final class RedisBenchWorkerMain {

    private RedisBenchWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        RedisClient client = RedisClient.create(args[0]);
        RedisLockRegistry registry = RedisLockRegistry.builder(client)
            .namespace(args[1])
            .leaseTtl(Duration.ofMillis(Long.parseLong(args[2])))
            .ownerIdentity(args[3])
            .build();
        registry.connect().get();
        Config config = new Config();
        config.useSingleServer().setAddress(args[0]);
        RedissonClient redisson = Redisson.create(config);
        System.out.println("READY " + args[3]);
        Records.serveLoopCommands((mode, key) -> switch (mode) {
            case "fair" -> registry.obtain(key, true);
            case "unfair" -> registry.obtain(key, false);
            case "redisson-lock" -> redisson.getLock("bench-redisson:" + key);
            case "redisson-fair" -> redisson.getFairLock("bench-redisson-fair:" + key);
            default -> throw new IllegalArgumentException("unknown mode: " + mode);
        });
        registry.close();
        redisson.shutdown();
        client.shutdown();
    }
}
