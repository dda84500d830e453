package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holds one gRPC call of a jetcd client, the first of a method whose request matches: its request
 * until {@link #deliverRequest()}, its answer until {@link #deliverAnswer()}, as an etcd member
 * frozen with the request in its socket buffer, or a network path that delivers it late, would.
 * The call is opened at once; the server sees its request only once delivered, and applies it
 * then. Put it on the client with {@code interceptor(...)}.
 */
public final class HeldGrpcCall implements ClientInterceptor {

    private final String fullMethodName;

    private final Predicate<Object> request;

    private final AtomicBoolean taken = new AtomicBoolean();

    private final CompletableFuture<Void> held = new CompletableFuture<>();

    private final CompletableFuture<Void> requestGate = new CompletableFuture<>();

    private final CompletableFuture<Void> answerGate = new CompletableFuture<>();

    private HeldGrpcCall(String fullMethodName, Predicate<Object> request) {
        this.fullMethodName = fullMethodName;
        this.request = request;
    }

    /**
     * @param fullMethodName such as {@code etcdserverpb.KV/Txn}
     * @param request chooses the call to hold by its request message
     */
    public static HeldGrpcCall firstOf(String fullMethodName, Predicate<Object> request) {
        return new HeldGrpcCall(fullMethodName, request);
    }

    /** Waits until a call was chosen and its request held. */
    public void awaitHeld(Duration timeout) {
        assertThat(this.held).as("a held call").succeedsWithin(timeout);
    }

    /** Sends the held request (and any it holds from now on: none, one call is held). */
    public void deliverRequest() {
        this.requestGate.complete(null);
    }

    /** Passes the held call's answer (and everything after it) to the client. */
    public void deliverAnswer() {
        this.answerGate.complete(null);
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (!this.fullMethodName.equals(method.getFullMethodName()) || this.taken.get()) {
            return next.newCall(method, options);
        }
        return new Holding<>(next.newCall(method, options));
    }

    /**
     * A call that is held once its request matches. gRPC calls a call's methods, and its
     * listener's, one at a time; the held ones are replayed in order on the thread that delivers them.
     */
    private final class Holding<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {

        /** Set by {@link #sendMessage}, which gRPC calls after {@link #start}, before any answer. */
        private volatile boolean holding;

        /** What is left to send, in order, once the request is delivered. */
        private CompletableFuture<Void> outbound = HeldGrpcCall.this.requestGate;

        Holding(ClientCall<Q, R> call) {
            super(call);
        }

        @Override
        public void start(Listener<R> listener, Metadata headers) {
            super.start(new HeldAnswers<>(listener, this), headers);
        }

        @Override
        public void sendMessage(Q message) {
            if (!this.holding && HeldGrpcCall.this.request.test(message) && HeldGrpcCall.this.taken.compareAndSet(false,
                    true)) {
                this.holding = true;
                HeldGrpcCall.this.held.complete(null);
            }
            if (this.holding) {
                this.outbound = this.outbound.thenRun(() -> delegate().sendMessage(message));
            }
            else {
                super.sendMessage(message);
            }
        }

        @Override
        public void halfClose() {
            if (this.holding) {
                this.outbound = this.outbound.thenRun(() -> delegate().halfClose());
            }
            else {
                super.halfClose();
            }
        }

        boolean isHolding() {
            return this.holding;
        }
    }

    /** The answers of a held call, passed on once {@link #deliverAnswer()} is called. */
    private final class HeldAnswers<R> extends ForwardingClientCallListener.SimpleForwardingClientCallListener<R> {

        private final Holding<?, R> call;

        private CompletableFuture<Void> inbound = HeldGrpcCall.this.answerGate;

        HeldAnswers(ClientCall.Listener<R> listener, Holding<?, R> call) {
            super(listener);
            this.call = call;
        }

        @Override
        public void onHeaders(Metadata headers) {
            pass(() -> super.onHeaders(headers));
        }

        @Override
        public void onMessage(R message) {
            pass(() -> super.onMessage(message));
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            pass(() -> super.onClose(status, trailers));
        }

        private void pass(Runnable callback) {
            if (this.call.isHolding()) {
                this.inbound = this.inbound.thenRun(callback);
            }
            else {
                callback.run();
            }
        }
    }
}
