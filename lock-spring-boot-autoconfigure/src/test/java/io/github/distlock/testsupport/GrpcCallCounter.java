package io.github.distlock.testsupport;

import java.util.concurrent.atomic.AtomicLong;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;

/** Counts the gRPC calls a jetcd client starts (unary or stream): put it on the client with {@code interceptor(...)}. */
public final class GrpcCallCounter implements ClientInterceptor {

    private final AtomicLong calls = new AtomicLong();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        this.calls.incrementAndGet();
        return next.newCall(method, options);
    }

    /** @return the calls started so far */
    public long calls() {
        return this.calls.get();
    }
}
