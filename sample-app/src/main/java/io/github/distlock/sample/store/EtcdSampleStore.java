package io.github.distlock.sample.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.distlock.sample.SampleProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The sample's shared data in etcd ({@code distributed-lock.store=etcd}, the default), through
 * the jetcd {@link Client} that the starter auto-configures. A fenced value's fence is at
 * {@code <path>/fence}, zero-padded so that etcd's byte-wise value comparison orders fences
 * numerically; conditional writes are etcd transactions.
 */
@Component
@ConditionalOnProperty(name = "distributed-lock.store", havingValue = "etcd", matchIfMissing = true)
public class EtcdSampleStore implements SampleStore {

    private static final String FENCE_FORMAT = "%019d";

    private final KV kv;

    private final String prefix;

    private final Duration timeout;

    public EtcdSampleStore(Client client, SampleProperties properties) {
        this.kv = client.getKVClient();
        this.prefix = properties.store().prefix();
        this.timeout = properties.store().timeout();
    }

    @Override
    public Optional<String> get(String path) {
        GetResponse response = await(this.kv.get(key(path)), "read " + path);
        return response.getKvs().stream().findFirst().map(keyValue -> text(keyValue.getValue()));
    }

    @Override
    public Map<String, String> list(String pathPrefix) {
        GetResponse response = await(this.kv.get(key(pathPrefix), GetOption.builder().isPrefix(true).build()),
                "list " + pathPrefix);
        Map<String, String> values = new LinkedHashMap<>();
        int start = (this.prefix + pathPrefix).length();
        for (KeyValue keyValue : response.getKvs()) {
            values.put(text(keyValue.getKey()).substring(start), text(keyValue.getValue()));
        }
        return values;
    }

    @Override
    public void put(String path, String value) {
        await(this.kv.put(key(path), bytes(value)), "write " + path);
    }

    @Override
    public boolean create(String path, String value) {
        ByteSequence key = key(path);
        return await(this.kv.txn()
            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(key, bytes(value), PutOption.DEFAULT))
            .commit(), "create " + path).isSucceeded();
    }

    @Override
    public boolean createFenced(String path, String value) {
        ByteSequence key = key(path);
        return await(this.kv.txn()
            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(key, bytes(value), PutOption.DEFAULT), Op.put(key(fencePath(path)), fence(0), PutOption.DEFAULT))
            .commit(), "create " + path).isSucceeded();
    }

    @Override
    public FencedWrite putFenced(String path, String value, long fence) {
        ByteSequence fenceKey = key(fencePath(path));
        TxnResponse response = await(this.kv.txn()
            .If(new Cmp(fenceKey, Cmp.Op.LESS, CmpTarget.value(fence(fence))))
            .Then(Op.put(key(path), bytes(value), PutOption.DEFAULT), Op.put(fenceKey, fence(fence), PutOption.DEFAULT))
            .Else(Op.get(fenceKey, GetOption.DEFAULT))
            .commit(), "write " + path);
        if (response.isSucceeded()) {
            return FencedWrite.WRITTEN;
        }
        return response.getGetResponses().get(0).getKvs().stream()
            .findFirst()
            .map(keyValue -> FencedWrite.stale(Long.parseLong(text(keyValue.getValue()))))
            .orElse(FencedWrite.MISSING);
    }

    private ByteSequence key(String path) {
        return bytes(this.prefix + path);
    }

    private static String fencePath(String path) {
        return path + "/fence";
    }

    private static ByteSequence fence(long fence) {
        return bytes(String.format(FENCE_FORMAT, fence));
    }

    /** Waits for an etcd request, at most {@code sample.store.timeout}. */
    private <T> T await(CompletableFuture<T> request, String what) {
        try {
            return request.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (TimeoutException ex) {
            request.cancel(true);
            throw new StoreUnavailableException("etcd did not answer within " + this.timeout.toMillis()
                    + " ms (" + what + ")", ex);
        }
        catch (ExecutionException ex) {
            Throwable failure = (ex.getCause() != null) ? ex.getCause() : ex;
            throw new StoreUnavailableException("etcd request failed (" + what + "): " + failure.getMessage(),
                    failure);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for etcd (" + what + ")", ex);
        }
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    private static String text(ByteSequence bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
