package io.github.distlock.sample.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

import io.github.distlock.sample.SampleProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The sample's shared data in Redis ({@code distributed-lock.store=redis}), through the
 * {@link StringRedisTemplate} that Spring Boot configures on the same {@code spring.data.redis}
 * connection as the locks: a path is the key {@code <sample.store.prefix><path>}, and a fenced
 * value's fence is at {@code <path>/fence}, compared and written together with the value in one
 * Lua script. Each command is bounded by the connection's command timeout
 * ({@code spring.data.redis.timeout}, which {@code application.yml} sets to
 * {@code sample.store.timeout}).
 *
 * <p>Meant for one Redis server or a Sentinel-managed primary: a fenced write's two keys are not
 * in one Redis Cluster hash slot, and {@link #list} scans one server.
 */
@Component
@ConditionalOnProperty(name = "distributed-lock.store", havingValue = "redis")
public class RedisSampleStore implements SampleStore {

    private static final String FENCE_FORMAT = "%019d";

    /** KEYS: value, fence; ARGV: value, fence 0. */
    private static final RedisScript<Boolean> CREATE_FENCED = RedisScript.of("""
            if redis.call('EXISTS', KEYS[1]) == 1 then return false end
            redis.call('SET', KEYS[1], ARGV[1])
            redis.call('SET', KEYS[2], ARGV[2])
            return true""", Boolean.class);

    /** KEYS: value, fence; ARGV: value, fence (zero-padded, so that strings compare as numbers). */
    private static final RedisScript<String> PUT_FENCED = RedisScript.of("""
            local stored = redis.call('GET', KEYS[2])
            if not stored then return false end
            if stored >= ARGV[2] then return stored end
            redis.call('SET', KEYS[1], ARGV[1])
            redis.call('SET', KEYS[2], ARGV[2])
            return 'written'""", String.class);

    private final StringRedisTemplate redis;

    private final String prefix;

    public RedisSampleStore(StringRedisTemplate redis, SampleProperties properties) {
        this.redis = redis;
        this.prefix = properties.store().prefix();
    }

    @Override
    public Optional<String> get(String path) {
        return Optional.ofNullable(call("read " + path, () -> this.redis.opsForValue().get(key(path))));
    }

    @Override
    public Map<String, String> list(String pathPrefix) {
        return call("list " + pathPrefix, () -> {
            List<String> keys = new ArrayList<>();
            ScanOptions scan = ScanOptions.scanOptions().match(glob(key(pathPrefix)) + "*").count(100).build();
            try (Cursor<String> cursor = this.redis.scan(scan)) {
                cursor.forEachRemaining(keys::add);
            }
            Map<String, String> values = new TreeMap<>();
            List<String> found = keys.isEmpty() ? List.of() : this.redis.opsForValue().multiGet(keys);
            int start = key(pathPrefix).length();
            for (int i = 0; i < keys.size(); i++) {
                if (found.get(i) != null) {
                    values.put(keys.get(i).substring(start), found.get(i));
                }
            }
            return values;
        });
    }

    @Override
    public void put(String path, String value) {
        call("write " + path, () -> {
            this.redis.opsForValue().set(key(path), value);
            return null;
        });
    }

    @Override
    public boolean create(String path, String value) {
        return Boolean.TRUE.equals(call("create " + path, () -> this.redis.opsForValue().setIfAbsent(key(path), value)));
    }

    @Override
    public boolean createFenced(String path, String value) {
        return Boolean.TRUE.equals(call("create " + path,
                () -> this.redis.execute(CREATE_FENCED, List.of(key(path), key(path + "/fence")), value, fence(0))));
    }

    @Override
    public FencedWrite putFenced(String path, String value, long fence) {
        String result = call("write " + path,
                () -> this.redis.execute(PUT_FENCED, List.of(key(path), key(path + "/fence")), value, fence(fence)));
        if (result == null) {
            return FencedWrite.MISSING;
        }
        return result.equals("written") ? FencedWrite.WRITTEN : FencedWrite.stale(Long.parseLong(result));
    }

    private String key(String path) {
        return this.prefix + path;
    }

    private static String fence(long fence) {
        return String.format(FENCE_FORMAT, fence);
    }

    /** {@code text} matched literally by a SCAN pattern. */
    private static String glob(String text) {
        return text.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }

    private static <T> T call(String what, Supplier<T> command) {
        try {
            return command.get();
        }
        catch (DataAccessException ex) {
            Throwable cause = (ex.getMostSpecificCause() != null) ? ex.getMostSpecificCause() : ex;
            throw new StoreUnavailableException("Redis request failed (" + what + "): " + cause.getMessage(), ex);
        }
    }
}
