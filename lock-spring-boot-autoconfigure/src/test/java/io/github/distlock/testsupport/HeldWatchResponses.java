package io.github.distlock.testsupport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * Holds the answers of a jetcd client's watch streams from {@link #hold()} on and passes them on
 * one at a time, in order, as a watch stream on a member that lags behind the cluster (one
 * catching up after a freeze, say) delivers revisions that the cluster has long moved past. Put it
 * on the client with {@code interceptor(...)}.
 *
 * <p>gRPC calls a call's listener one callback at a time; held callbacks are replayed under the
 * same lock that queues new ones, so the listener still sees them one at a time and in order.
 */
public final class HeldWatchResponses implements ClientInterceptor {

    private static final String WATCH = "etcdserverpb.Watch/Watch";

    private final ReentrantLock lock = new ReentrantLock();

    /** What is held, oldest first: every callback of every watch stream since {@link #hold()}. */
    private final Deque<Held> held = new ArrayDeque<>();

    private boolean holding;

    /** Holds every watch answer from now on. */
    public void hold() {
        this.lock.lock();
        try {
            this.holding = true;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return the watch answers held and not passed on yet, oldest first */
    public List<WatchResponse> heldResponses() {
        this.lock.lock();
        try {
            List<WatchResponse> responses = new ArrayList<>();
            for (Held callback : this.held) {
                if (callback.response != null) {
                    responses.add(callback.response);
                }
            }
            return responses;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Passes on the oldest held watch answer (and any other callback held before it); the rest stays held. */
    public void deliverOne() {
        this.lock.lock();
        try {
            Held next;
            while ((next = this.held.poll()) != null) {
                next.callback.run();
                if (next.response != null) {
                    return;
                }
            }
            throw new IllegalStateException("no watch answer is held");
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Passes on everything held and stops holding. */
    public void deliverAll() {
        this.lock.lock();
        try {
            this.holding = false;
            Held next;
            while ((next = this.held.poll()) != null) {
                next.callback.run();
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        if (!WATCH.equals(method.getFullMethodName())) {
            return call;
        }
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {

            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(new HeldListener<>(listener, call), headers);
            }
        };
    }

    /**
     * Runs {@code callback} now, or queues it while holding or while older callbacks wait.
     * @return whether it was queued
     */
    private boolean pass(Runnable callback, @Nullable WatchResponse response) {
        this.lock.lock();
        try {
            if (this.holding || !this.held.isEmpty()) {
                this.held.add(new Held(callback, response));
                return true;
            }
            callback.run();
            return false;
        }
        finally {
            this.lock.unlock();
        }
    }

    private record Held(Runnable callback, @Nullable WatchResponse response) {
    }

    private final class HeldListener<R> extends ForwardingClientCallListener.SimpleForwardingClientCallListener<R> {

        private final ClientCall<?, R> call;

        HeldListener(ClientCall.Listener<R> listener, ClientCall<?, R> call) {
            super(listener);
            this.call = call;
        }

        @Override
        public void onMessage(R message) {
            if (pass(() -> super.onMessage(message), (message instanceof WatchResponse response) ? response : null)) {
                // The stub asks for the next answer only once it has this one: ask for it, so later
                // answers reach the client (and wait here) as they would reach a lagging client.
                this.call.request(1);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            pass(() -> super.onClose(status, trailers), null);
        }
    }
}
