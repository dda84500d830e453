package io.github.distlock.autoconfigure;

import java.util.Collection;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Names the Redis a {@link LettuceConnectionFactory} connects to, for the lock registry's
 * messages and logs: host and port, socket, Sentinel master and sentinels, or Cluster nodes, with
 * the database when it is not 0 and TLS when used. Never credentials.
 */
final class RedisConnectionDescription {

    private RedisConnectionDescription() {
    }

    static String of(LettuceConnectionFactory connectionFactory) {
        String tls = connectionFactory.isUseSsl() ? " over TLS" : "";
        RedisClusterConfiguration cluster = connectionFactory.getClusterConfiguration();
        if (connectionFactory.isClusterAware() && cluster != null) {
            return "Redis Cluster at " + nodes(cluster.getClusterNodes()) + tls;
        }
        String database = (connectionFactory.getDatabase() != 0) ? ", database " + connectionFactory.getDatabase() : "";
        RedisSentinelConfiguration sentinel = connectionFactory.getSentinelConfiguration();
        if (connectionFactory.isRedisSentinelAware() && sentinel != null) {
            String master = (sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?";
            return "Redis master '" + master + "' via Sentinel at " + nodes(sentinel.getSentinels()) + database + tls;
        }
        RedisSocketConfiguration socket = connectionFactory.getSocketConfiguration();
        if (socket != null) {
            return "Redis at " + socket.getSocket() + database;
        }
        return "Redis at " + hostAndPort(connectionFactory.getHostName(), connectionFactory.getPort()) + database + tls;
    }

    private static String nodes(Collection<RedisNode> nodes) {
        return nodes.stream()
            .map((node) -> hostAndPort(node.getHost(), node.getPortOr(RedisNode.DEFAULT_PORT)))
            .collect(Collectors.joining(", "));
    }

    private static String hostAndPort(@Nullable String host, int port) {
        return ((host != null && host.indexOf(':') >= 0) ? "[" + host + "]" : host) + ":" + port;
    }
}
