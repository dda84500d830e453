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
import io.lettuce.core.RedisConnectionException;
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
 * handover channel. Lettuce reconnects both and subscribes again by itself after a reset; a pair
 * that fell silent without one is {@link #replace replaced} by a new pair. Either way messages
 * published meanwhile are lost, which waiters make up for by checking their place again, and
 * holders by assuming an entry was queued behind them, once Redis confirmed the new subscription.
 * Each new pair checks the server's version first ({@link RedisVersion}).
 *
 * <p>Invariants: at most one connection attempt counts at a time ({@link #connecting} is replaced
 * only under {@link #lock}); callers wait for it within their own bound, never Lettuce's; an
 * attempt fails when it has not opened within its own bound, and a pair it opens later is closed,
 * so that one attempt stuck in Lettuce (whose command timeout defaults to a minute) cannot keep
 * the store from connecting again.
 */
final class RedisConnection {

    private static final Logger logger = LoggerFactory.getLogger(RedisConnection.class);

    /** A failed connection attempt is not repeated sooner than this, however many callers ask. */
    private static final long RECONNECT_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final AbstractRedisClient client;

    private final String channel;

    private final Consumer<String> messages;

    private final Runnable subscribed;

    private final Runnable opened;

    private final ExecutorService connector;

    /** How long an attempt may take to open a pair before it counts as failed. */
    private final long attemptTimeoutNanos;

    private final ReentrantLock lock = new ReentrantLock();

    private @Nullable CompletableFuture<Connected> connecting;

    private long failedAt;

    /**
     * Set once a pair was open: the first confirmation of a later pair's subscription means that
     * messages may have been lost, as a resubscription does.
     */
    private volatile boolean openedBefore;

    private volatile boolean closed;

    /**
     * @param messages told each message on the channel
     * @param subscribed told each time a subscription to the channel took effect (Redis confirmed
     * it, also after Lettuce subscribed again on a reconnect, and on a pair that replaced another):
     * messages before it may have been lost
     * @param opened told each time a new pair is open, on a thread of {@code connector}
     * @param attemptTimeoutNanos how long an attempt may take to open a pair
     */
    RedisConnection(AbstractRedisClient client, String channel, Consumer<String> messages, Runnable subscribed,
            Runnable opened, ExecutorService connector, long attemptTimeoutNanos) {
        this.client = client;
        this.channel = channel;
        this.messages = messages;
        this.subscribed = subscribed;
        this.opened = opened;
        this.connector = connector;
        this.attemptTimeoutNanos = attemptTimeoutNanos;
    }

    /** @return the connections, connecting first if there are none (a failed attempt is retried) */
    CompletableFuture<Connected> connection() {
        this.lock.lock();
        try {
            CompletableFuture<Connected> current = this.connecting;
            return (current != null && !retryDue(current)) ? current : connect();
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Connects again if the last attempt failed, not sooner than a pause after it; never starts the first attempt. */
    void reconnectIfFailed() {
        this.lock.lock();
        try {
            CompletableFuture<Connected> current = this.connecting;
            if (current != null && retryDue(current) && !this.closed) {
                connect();
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Closes {@code dead} and connects a new pair, unless {@code dead} was replaced already:
     * Lettuce notices a connection that died without a reset only when the kernel gives up on it.
     * Commands still waiting on {@code dead} fail; the new pair's subscription counts as a
     * resubscription ({@link #subscribed}).
     * @param dead a pair that answered no probe
     */
    void replace(Connected dead) {
        this.lock.lock();
        try {
            if (this.closed || connectedOrNull() != dead) {
                return;
            }
            dead.close();
            connect();
        }
        finally {
            this.lock.unlock();
        }
    }

    private boolean retryDue(CompletableFuture<Connected> attempt) {
        return attempt.isCompletedExceptionally() && System.nanoTime() - this.failedAt >= RECONNECT_PAUSE_NANOS;
    }

    /** Starts an attempt; the caller holds {@link #lock}. */
    private CompletableFuture<Connected> connect() {
        CompletableFuture<Connected> attempt = new CompletableFuture<>();
        CompletableFuture.supplyAsync(this::open, this.connector).whenComplete((connected, failure) -> {
            if (failure != null) {
                attempt.completeExceptionally(failure);
            }
            else if (!attempt.complete(connected)) {
                // Too late: the attempt failed meanwhile, and another may have opened a pair already.
                connected.close();
            }
        });
        CompletableFuture.delayedExecutor(this.attemptTimeoutNanos, TimeUnit.NANOSECONDS)
            .execute(() -> attempt.completeExceptionally(new RedisConnectionException("the connections did not open "
                    + "within " + Duration.ofNanos(this.attemptTimeoutNanos))));
        attempt.whenComplete((connected, failure) -> {
            if (failure != null) {
                this.failedAt = System.nanoTime();
            }
            else if (this.closed) {
                connected.close();
            }
            else {
                this.opened.run();
            }
        });
        this.connecting = attempt;
        return attempt;
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
            AtomicBoolean firstConfirmation = new AtomicBoolean(!this.openedBefore);
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
                    // Later confirmations follow a resubscribe after a reconnect, and every confirmation
                    // of a pair that replaced another one counts: its entries may have missed messages.
                    if (!firstConfirmation.getAndSet(false)) {
                        RedisConnection.this.subscribed.run();
                    }
                }
            });
            pubSub.sync().subscribe(this.channel);
            this.openedBefore = true;
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

        /**
         * Sends {@code PING} on both connections (on a Cluster, to every primary).
         * @return completes when every {@code PING} is answered, or fails with the first failure
         */
        CompletableFuture<Void> ping() {
            CompletionStage<?> commands = (this.async instanceof RedisAdvancedClusterAsyncCommands<String,
                    String> cluster) ? cluster.upstream().commands().ping() : this.async.ping();
            return CompletableFuture.allOf(commands.toCompletableFuture(),
                    this.pubSub.async().ping().toCompletableFuture());
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
