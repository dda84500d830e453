package io.github.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.github.distlock.redis.RedisScripts.RedisScript;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's two connections on the application's Lettuce client (a {@link RedisClient}, also
 * for Sentinel, or a {@link RedisClusterClient}): one for commands, one subscribed to the
 * handover channel. Lettuce reconnects both and subscribes again by itself; messages published
 * meanwhile are lost, which waiters make up for by checking their place again, and holders by
 * assuming an entry was queued behind them, once Redis confirmed the new subscription. Each new
 * pair checks the server's version first ({@link RedisVersion}).
 *
 * <p>Invariant: at most one connection attempt runs at a time ({@link #connecting} is replaced
 * only under {@link #lock}); callers wait for it within their own bound, never Lettuce's.
 */
final class RedisConnection {

    private static final Logger logger = LoggerFactory.getLogger(RedisConnection.class);

    /** A failed connection attempt is not repeated sooner than this, however many callers ask. */
    private static final long RECONNECT_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final AbstractRedisClient client;

    private final String channel;

    private final Consumer<String> messages;

    private final Runnable subscribed;

    private final ExecutorService connector;

    private final ReentrantLock lock = new ReentrantLock();

    private @Nullable CompletableFuture<Connected> connecting;

    private long failedAt;

    private volatile boolean closed;

    /**
     * @param messages told each message on the channel
     * @param subscribed told each time a subscription to the channel took effect (Redis confirmed
     * it, also after Lettuce subscribed again on a reconnect): messages before it may have been lost
     */
    RedisConnection(AbstractRedisClient client, String channel, Consumer<String> messages, Runnable subscribed,
            ExecutorService connector) {
        this.client = client;
        this.channel = channel;
        this.messages = messages;
        this.subscribed = subscribed;
        this.connector = connector;
    }

    /** @return the connections, connecting first if there are none (a failed attempt is retried) */
    CompletableFuture<Connected> connection() {
        this.lock.lock();
        try {
            CompletableFuture<Connected> current = this.connecting;
            if (current != null && (!current.isCompletedExceptionally()
                    || System.nanoTime() - this.failedAt < RECONNECT_PAUSE_NANOS)) {
                return current;
            }
            CompletableFuture<Connected> attempt = CompletableFuture.supplyAsync(this::open, this.connector);
            attempt.whenComplete((connected, failure) -> {
                if (failure != null) {
                    this.failedAt = System.nanoTime();
                }
                else if (this.closed) {
                    connected.close();
                }
            });
            this.connecting = attempt;
            return attempt;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return the connections if they are open, else {@code null} without starting an attempt */
    @Nullable Connected connectedOrNull() {
        CompletableFuture<Connected> current = this.connecting;
        return (current != null && current.isDone() && !current.isCompletedExceptionally()) ? current.join() : null;
    }

    private Connected open() {
        StatefulConnection<String, String> commands = null;
        StatefulRedisPubSubConnection<String, String> pubSub = null;
        try {
            RedisClusterAsyncCommands<String, String> async;
            if (this.client instanceof RedisClusterClient cluster) {
                var connection = cluster.connect(StringCodec.UTF8);
                commands = connection;
                async = connection.async();
                checkVersion(async, commands.getTimeout());
                pubSub = cluster.connectPubSub(StringCodec.UTF8);
            }
            else {
                var connection = ((RedisClient) this.client).connect(StringCodec.UTF8);
                commands = connection;
                async = connection.async();
                checkVersion(async, commands.getTimeout());
                pubSub = ((RedisClient) this.client).connectPubSub(StringCodec.UTF8);
            }
            AtomicBoolean firstConfirmation = new AtomicBoolean(true);
            pubSub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    RedisConnection.this.messages.accept(message);
                }

                @Override
                public void subscribed(String channel, long count) {
                    // The first confirmation answers the subscribe below, which returns before any entry
                    // is written: nothing can have been missed. Lettuce tells listeners after it completed
                    // that command, so entries written meanwhile would wrongly count as queued behind.
                    // Later confirmations follow a resubscribe after a reconnect.
                    if (!firstConfirmation.getAndSet(false)) {
                        RedisConnection.this.subscribed.run();
                    }
                }
            });
            pubSub.sync().subscribe(this.channel);
            return new Connected(commands, async, pubSub);
        }
        catch (RuntimeException ex) {
            if (commands != null) {
                commands.closeAsync();
            }
            if (pubSub != null) {
                pubSub.closeAsync();
            }
            throw ex;
        }
    }

    /**
     * Reads the server's version ({@code INFO server}; on a Cluster, of every primary) and fails if
     * the scripts cannot run on it. A server that refuses {@code INFO} (a renamed command; an ACL
     * user without it, which means Redis 6 or later) or does not name its version passes.
     * @return the oldest version read, or {@code null} if none was
     * @throws IllegalStateException naming the version and the minimum, if it is older
     */
    static @Nullable RedisVersion checkVersion(RedisClusterAsyncCommands<String, String> async, Duration timeout) {
        List<String> infos;
        try {
            CompletionStage<List<String>> call = (async instanceof RedisAdvancedClusterAsyncCommands<String,
                    String> cluster) ? cluster.upstream().commands().info("server")
                            : async.info("server").thenApply(List::of);
            infos = await(call, timeout, "INFO server");
        }
        catch (RedisCommandExecutionException ex) {
            logger.debug("Redis refused INFO server, so its version is not checked: {}", ex.getMessage());
            return null;
        }
        return checkOldest(infos);
    }

    /**
     * @param infos answers to {@code INFO server}
     * @return the oldest version they name, or {@code null} if none names one
     * @throws IllegalStateException naming the version and the minimum, if it is too old for the scripts
     */
    static @Nullable RedisVersion checkOldest(List<String> infos) {
        RedisVersion oldest = null;
        for (String info : infos) {
            RedisVersion version = RedisVersion.fromInfo(info);
            if (version == null) {
                logger.debug("Redis named no version in INFO server, so it is not checked");
            }
            else if (oldest == null || !version.isAtLeast(oldest)) {
                oldest = version;
            }
        }
        if (oldest != null && !oldest.isAtLeast(RedisVersion.MINIMUM)) {
            throw new IllegalStateException(oldest.tooOld());
        }
        return oldest;
    }

    /** Waits for a call of a connection attempt as Lettuce's synchronous API would, also for a cluster-wide one. */
    private static <T> T await(CompletionStage<T> call, Duration timeout, String what) {
        try {
            return call.toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            throw (ex.getCause() instanceof RedisException redis) ? redis : new RedisException(ex.getCause());
        }
        catch (TimeoutException ex) {
            throw new RedisCommandTimeoutException(what + " got no answer within " + timeout);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new RedisCommandInterruptedException(ex);
        }
    }

    /** Closes the store's connections (the client stays open: it is the application's). */
    void close() {
        this.closed = true;
        Connected connected = connectedOrNull();
        if (connected != null) {
            connected.close();
        }
    }

    /** The open connections. */
    record Connected(StatefulConnection<String, String> commands, RedisClusterAsyncCommands<String, String> async,
            StatefulRedisPubSubConnection<String, String> pubSub) {

        /**
         * Runs a script by its SHA-1, sending its source once when Redis does not know it (after
         * a restart or a {@code SCRIPT FLUSH}).
         */
        <T> CompletableFuture<T> eval(RedisScript script, ScriptOutputType type, String[] keys, String... args) {
            CompletableFuture<T> result = new CompletableFuture<>();
            this.async.<T>evalsha(script.sha(), type, keys, args).whenComplete((answer, failure) -> {
                if (failure == null) {
                    result.complete(answer);
                }
                else if (failure instanceof RedisNoScriptException) {
                    this.async.<T>eval(script.source(), type, keys, args).whenComplete((retried, again) -> {
                        if (again == null) {
                            result.complete(retried);
                        }
                        else {
                            result.completeExceptionally(again);
                        }
                    });
                }
                else {
                    result.completeExceptionally(failure);
                }
            });
            return result;
        }

        /** Runs a script whose answer is an array (with {@link io.lettuce.core.codec.StringCodec}: strings and longs). */
        CompletableFuture<List<Object>> evalList(RedisScript script, String[] keys, String... args) {
            return eval(script, ScriptOutputType.MULTI, keys, args);
        }

        void close() {
            this.commands.closeAsync();
            this.pubSub.closeAsync();
        }
    }
}
