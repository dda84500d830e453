package io.github.distlock.etcd;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseKeepAliveRequest;
import io.etcd.jetcd.api.LeaseKeepAliveResponse;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdExceptionFactory;
import io.etcd.jetcd.support.Util;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Single lease keep-alives whose gRPC stream always ends: at the first answer, or at the attempt's
 * deadline, when gRPC cancels it.
 *
 * <p>jetcd's {@code keepAliveOnce} ends its stream only once the server answers: a timeout on the
 * future it returns does not reach the stream. During a stall every retry left a stream open, and
 * their requests were sent when the network healed. Here each attempt is a call on jetcd's own
 * channel with jetcd's credentials and wait-for-ready setting (reached through jetcd's internals,
 * as {@link ChannelReconnect} does) and a gRPC deadline, half-closed after its one request. If the
 * internals differ from the jetcd version this starter was tested with, jetcd's
 * {@code keepAliveOnce} is used instead and this says so once at DEBUG.
 */
final class LeaseKeepAlives {

    private static final Logger logger = LoggerFactory.getLogger(LeaseKeepAlives.class);

    private final Client client;

    /** {@code null} when jetcd's channel cannot be reached: keep-alives then go through jetcd. */
    private final LeaseGrpc.@Nullable LeaseStub stub;

    private final AtomicInteger open = new AtomicInteger();

    private LeaseKeepAlives(Client client, LeaseGrpc.@Nullable LeaseStub stub) {
        this.client = client;
        this.stub = stub;
    }

    static LeaseKeepAlives of(Client client) {
        try {
            Object manager = ChannelReconnect.connectionManager(client);
            Method newStub = manager.getClass().getDeclaredMethod("newStub", Function.class);
            newStub.setAccessible(true);
            Function<ManagedChannel, LeaseGrpc.LeaseStub> create = LeaseGrpc::newStub;
            LeaseGrpc.LeaseStub stub = (LeaseGrpc.LeaseStub) newStub.invoke(manager, create);
            // As jetcd's own keep-alives: a member that lost its leader must not answer for the cluster.
            return new LeaseKeepAlives(client, Util.applyRequireLeader(true, stub));
        }
        catch (ReflectiveOperationException | RuntimeException | LinkageError ex) {
            logger.debug("Cannot reach the gRPC channel of {} ({}); keep-alives use jetcd's keepAliveOnce, whose "
                    + "streams stay open until etcd answers", client.getClass().getName(), ex.toString());
            return new LeaseKeepAlives(client, null);
        }
    }

    /**
     * Sends one keep-alive for {@code leaseId}.
     * @return completes with the TTL etcd renewed the lease for and the raft term of the answer, or
     * exceptionally: with {@link ErrorCode#NOT_FOUND} if etcd no longer knows the lease, otherwise
     * when the call failed or got no answer within {@code timeoutNanos}
     */
    CompletableFuture<Renewal> keepAliveOnce(long leaseId, long timeoutNanos) {
        if (this.stub == null) {
            return keepAliveOnceThroughJetcd(leaseId, timeoutNanos);
        }
        CompletableFuture<Renewal> answer = new CompletableFuture<>();
        this.open.incrementAndGet();
        this.stub.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
            .leaseKeepAlive(new ClientResponseObserver<LeaseKeepAliveRequest, LeaseKeepAliveResponse>() {

                private final AtomicInteger ended = new AtomicInteger();

                /** Set by gRPC before the call starts, so before any answer. */
                private @Nullable ClientCallStreamObserver<LeaseKeepAliveRequest> requests;

                @Override
                public void beforeStart(ClientCallStreamObserver<LeaseKeepAliveRequest> requestStream) {
                    this.requests = requestStream;
                }

                @Override
                public void onNext(LeaseKeepAliveResponse response) {
                    if (response.getTTL() <= 0) {
                        answer.completeExceptionally(EtcdExceptionFactory.newEtcdException(ErrorCode.NOT_FOUND,
                                "etcdserver: requested lease not found"));
                    }
                    else {
                        answer.complete(new Renewal(response.getTTL(), response.getHeader().getRaftTerm()));
                    }
                    // One answer is all we wait for: end the call rather than wait for the server's close.
                    ClientCallStreamObserver<LeaseKeepAliveRequest> requests = this.requests;
                    if (requests != null) {
                        requests.cancel("keep-alive answered", null);
                    }
                }

                @Override
                public void onError(Throwable failure) {
                    answer.completeExceptionally(failure);
                    end();
                }

                @Override
                public void onCompleted() {
                    answer.completeExceptionally(new IllegalStateException("keep-alive stream ended without an answer"));
                    end();
                }

                private void end() {
                    if (this.ended.compareAndSet(0, 1)) {
                        LeaseKeepAlives.this.open.decrementAndGet();
                    }
                }
            })
            .onNext(LeaseKeepAliveRequest.newBuilder().setID(leaseId).build());
        return answer;
    }

    /** The fallback: bounded for the caller, but the stream stays open until etcd answers. */
    private CompletableFuture<Renewal> keepAliveOnceThroughJetcd(long leaseId, long timeoutNanos) {
        this.open.incrementAndGet();
        return this.client.getLeaseClient()
            .keepAliveOnce(leaseId)
            .whenComplete((response, failure) -> this.open.decrementAndGet())
            .thenApply(response -> new Renewal(response.getTTL(), response.getHeader().getRaftTerm()))
            .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /** For tests: keep-alive calls whose gRPC stream has not ended yet. */
    int openCalls() {
        return this.open.get();
    }

    /**
     * A keep-alive etcd answered.
     * @param ttlSeconds the TTL the lease was renewed for
     * @param raftTerm the raft term of the member that answered
     */
    record Renewal(long ttlSeconds, long raftTerm) {
    }
}
