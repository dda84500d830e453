package io.github.distlock.etcd;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.etcd.jetcd.Client;
import io.grpc.ManagedChannel;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the gRPC channel of a jetcd {@link Client} try to connect again right after a failed etcd
 * call, instead of when its own backoff timer fires.
 *
 * <p>After a connection failure, grpc-java waits longer before each new attempt, up to two minutes,
 * and a call on a channel in backoff fails at once without trying (jetcd issue 1616). After an
 * outage of a few minutes, locks would keep failing for up to two minutes after etcd is back. jetcd
 * does not expose its channel, so it is read from jetcd's internals (tested with the jetcd version
 * this starter depends on); if they differ, the channel's own backoff applies and this says so once
 * at DEBUG.
 *
 * <p>At most one reconnect per second, so a failing etcd sees no more than one connection attempt
 * per second from this client, as with gRPC's first backoff step; none while nothing fails.
 */
final class ChannelReconnect {

    private static final Logger logger = LoggerFactory.getLogger(ChannelReconnect.class);

    private static final long MIN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** {@code null}, as {@link #channelField}, when jetcd's channel cannot be reached. */
    private final @Nullable Object connectionManager;

    private final @Nullable Field channelField;

    private final AtomicLong lastNanos = new AtomicLong(System.nanoTime() - MIN_INTERVAL_NANOS);

    private ChannelReconnect(@Nullable Object connectionManager, @Nullable Field channelField) {
        this.connectionManager = connectionManager;
        this.channelField = channelField;
    }

    /** A reconnect for the channel of {@code client}, or one that does nothing if it cannot be reached. */
    static ChannelReconnect of(Client client) {
        try {
            Object manager = connectionManager(client);
            Field channelField = manager.getClass().getDeclaredField("managedChannel");
            channelField.setAccessible(true);
            if (!ManagedChannel.class.isAssignableFrom(channelField.getType())) {
                throw new NoSuchFieldException("managedChannel is a " + channelField.getType().getName());
            }
            return new ChannelReconnect(manager, channelField);
        }
        catch (ReflectiveOperationException | RuntimeException ex) {
            logger.debug("Cannot reach the gRPC channel of {} ({}); after an etcd outage, reconnecting follows "
                    + "gRPC's backoff (up to 2 minutes)", client.getClass().getName(), ex.toString());
            return new ChannelReconnect(null, null);
        }
    }

    /** jetcd's internal holder of the client's gRPC channel and stub settings. */
    static Object connectionManager(Client client) throws ReflectiveOperationException {
        Field managerField = client.getClass().getDeclaredField("connectionManager");
        managerField.setAccessible(true);
        Object manager = managerField.get(client);
        if (manager == null) {
            throw new NoSuchFieldException("connectionManager of " + client.getClass().getName() + " is null");
        }
        return manager;
    }

    /** Whether this can shorten the channel's backoff. */
    boolean isEffective() {
        return this.channelField != null;
    }

    /**
     * Ends the channel's connection backoff, at most once a second: after a failed etcd call, and
     * before a call that follows a failure (a lease grant after the session was lost).
     */
    void now() {
        if (this.channelField == null) {
            return;
        }
        long now = System.nanoTime();
        long last = this.lastNanos.get();
        if (now - last < MIN_INTERVAL_NANOS || !this.lastNanos.compareAndSet(last, now)) {
            return;
        }
        try {
            ManagedChannel channel = (ManagedChannel) this.channelField.get(this.connectionManager);
            if (channel != null && !channel.isShutdown()) {
                // No-op on a connected channel; on one in backoff, starts a connection attempt now.
                channel.resetConnectBackoff();
            }
        }
        catch (IllegalAccessException | RuntimeException ex) {
            logger.debug("Could not reset the gRPC connection backoff: {}", ex.toString());
        }
    }
}
