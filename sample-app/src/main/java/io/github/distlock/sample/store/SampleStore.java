package io.github.distlock.sample.store;

import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The sample's shared data: text values at paths (relative to {@code sample.store.prefix}), kept
 * in the same store as the locks, so that every instance connected to it sees the same data.
 * {@link EtcdSampleStore} with {@code distributed-lock.store=etcd}, {@link RedisSampleStore} with
 * {@code distributed-lock.store=redis}, {@link ZookeeperSampleStore} with
 * {@code distributed-lock.store=zookeeper}, {@link JdbcSampleStore} with {@code distributed-lock.store=jdbc}. Every call is bounded by {@code sample.store.timeout} and
 * throws {@link StoreUnavailableException} when the store fails or does not answer in time, so a
 * request thread never hangs on an unreachable store.
 */
public interface SampleStore {

    /** @return the value at {@code path}, if there is one */
    Optional<String> get(String path);

    /** @return every value whose path starts with {@code pathPrefix}, by path relative to it, in path order */
    Map<String, String> list(String pathPrefix);

    /** Writes {@code value} at {@code path}, unconditionally. */
    void put(String path, String value);

    /**
     * Writes {@code value} at {@code path} unless a value is there, atomically.
     * @return whether it was written
     */
    boolean create(String path, String value);

    /**
     * Creates a fenced value: {@code value} at {@code path} with fence 0, unless a value is at
     * {@code path}, atomically.
     * @return whether it was created
     */
    boolean createFenced(String path, String value);

    /**
     * Writes a fenced value if {@code fence} is greater than the fence of its last write,
     * atomically: a writer whose lock has passed on to a newer holder (with a greater fence)
     * cannot overwrite that holder's data.
     * @param path where the value is
     * @param value the new value
     * @param fence the fence of the lock under which the caller wrote it
     * @return what happened
     */
    FencedWrite putFenced(String path, String value, long fence);

    /**
     * The outcome of {@link #putFenced}.
     * @param written whether the value was written
     * @param storedFence the fence of the last accepted write if the value was not written, or
     * {@code null} if there is no fenced value at the path (nor after the call)
     */
    record FencedWrite(boolean written, @Nullable Long storedFence) {

        static final FencedWrite WRITTEN = new FencedWrite(true, null);

        static final FencedWrite MISSING = new FencedWrite(false, null);

        static FencedWrite stale(long storedFence) {
            return new FencedWrite(false, storedFence);
        }
    }
}
