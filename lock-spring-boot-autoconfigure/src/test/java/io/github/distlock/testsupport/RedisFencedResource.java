package io.github.distlock.testsupport;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * A {@link FencedResource} in Redis: a hash {@code <name>} with fields {@code fence} and
 * {@code data}, compared and written by one script.
 */
public final class RedisFencedResource implements FencedResource {

    private static final String WRITE = """
            local stored = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
            if tonumber(ARGV[1]) <= stored then return 0 end
            redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'data', ARGV[2])
            return 1
            """;

    private final RedisCommands<String, String> redis;

    private final String name;

    public RedisFencedResource(RedisCommands<String, String> redis, String name) {
        this.redis = redis;
        this.name = name;
    }

    @Override
    public boolean write(long fence, String data) {
        if (fence <= 0) {
            throw new IllegalArgumentException("fence must be positive, but was " + fence);
        }
        Long accepted = this.redis.eval(WRITE, ScriptOutputType.INTEGER, new String[] { this.name },
                Long.toString(fence), data);
        return accepted == 1L;
    }

    @Override
    public long storedFence() {
        String fence = this.redis.hget(this.name, "fence");
        return (fence != null) ? Long.parseLong(fence) : 0;
    }

    @Override
    public String data() {
        return this.redis.hget(this.name, "data");
    }
}
