package io.github.distlock.testsupport;

import java.util.concurrent.atomic.AtomicLong;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;

/**
 * Counts the gRPC calls a jetcd client starts (unary or stream): put it on the client with
 * {@code interceptor(...)}. Lease keep-alives are counted apart: they belong to the session's
 * timer, not to any acquisition, and land in a counted stretch by chance.
 */
public final class GrpcCallCounter implements ClientInterceptor {

    private static final String KEEP_ALIVE = "etcdserverpb.Lease/LeaseKeepAlive";

    private final AtomicLong calls = new AtomicLong();

    private final AtomicLong keepAlives = new AtomicLong();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (KEEP_ALIVE.equals(method.getFullMethodName())) {
            this.keepAlives.incrementAndGet();
        }
        else {
            this.calls.incrementAndGet();
        }
        return next.newCall(method, options);
    }

    /** @return the calls started so far, lease keep-alives not included */
    public long calls() {
        return this.calls.get();
    }

    /** @return the lease keep-alive calls started so far */
    public long keepAlives() {
        return this.keepAlives.get();
    }
}
