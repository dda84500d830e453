package io.github.distlock.autoconfigure;

import java.util.List;

/**
 * {@code distributed-lock.store=redis}, but the application has no Redis connection the lock
 * registry can use: Spring Data Redis or Lettuce is missing, there is no
 * {@code RedisConnectionFactory} (or several and none is primary), it is not Lettuce, or it is a
 * static master/replica one. Says what to do about it.
 */
public class NoRedisConnectionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private static final String USES = "distributed-lock.store=redis keeps locks on the application's Redis "
            + "connection (a Lettuce connection factory, as spring-boot-starter-data-redis configures it), but ";

    private final String action;

    /**
     * Creates an exception.
     * @param problem what is wrong
     * @param action what to do about it
     */
    public NoRedisConnectionException(String problem, String action) {
        super(problem);
        this.action = action;
    }

    /** @return what to do about it */
    public String getAction() {
        return this.action;
    }

    static NoRedisConnectionException notOnClassPath() {
        return new NoRedisConnectionException(USES + "Spring Data Redis with Lettuce is not on the class path.",
                "Add org.springframework.boot:spring-boot-starter-data-redis to the application (it brings Spring "
                        + "Data Redis and Lettuce) and configure the connection under spring.data.redis (host, port, "
                        + "password, ssl, sentinel or cluster), or choose another distributed-lock.store.");
    }

    static NoRedisConnectionException noConnectionFactory() {
        return new NoRedisConnectionException(USES + "there is no RedisConnectionFactory bean.",
                "Add org.springframework.boot:spring-boot-starter-data-redis and configure spring.data.redis, and "
                        + "do not exclude Spring Boot's DataRedisAutoConfiguration; or define a "
                        + "LettuceConnectionFactory bean.");
    }

    static NoRedisConnectionException ambiguous(List<String> types) {
        return new NoRedisConnectionException(USES + "there are " + types.size() + " RedisConnectionFactory beans "
                + types + " and none is primary.",
                "Mark the connection factory the locks should use with @Primary, or define a LockRegistry bean.");
    }

    static NoRedisConnectionException notLettuce(String type) {
        return new NoRedisConnectionException(USES + "the application's RedisConnectionFactory is a " + type + ".",
                "Use Lettuce, Spring Boot's default Redis client: remove the Jedis dependency (or set "
                        + "spring.data.redis.client-type=lettuce), or define a LettuceConnectionFactory bean.");
    }

    static NoRedisConnectionException masterReplica() {
        return new NoRedisConnectionException(USES + "spring.data.redis.masterreplica.nodes configures a static "
                + "master/replica connection, whose client has no server of its own to keep locks on.",
                "Connect to the primary (spring.data.redis.host and port, or url), through Sentinel "
                        + "(spring.data.redis.sentinel.*) or to a Redis Cluster (spring.data.redis.cluster.nodes).");
    }
}
