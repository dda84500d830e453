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
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.sample.SampleProperties;
import org.springframework.stereotype.Component;

/**
 * The sample's shared data in etcd, through the jetcd {@link Client} that the starter
 * auto-configures: every instance connected to the same etcd sees the same data. Paths are
 * relative to {@code sample.store.prefix}; values are UTF-8 text. Every request is bounded by
 * {@code sample.store.timeout}, and a request that fails or times out throws
 * {@link StoreUnavailableException}, so a request thread never hangs on an unreachable etcd.
 */
@Component
public class EtcdStore {

    private final KV kv;

    private final String prefix;

    private final Duration timeout;

    public EtcdStore(Client client, SampleProperties properties) {
        this.kv = client.getKVClient();
        this.prefix = properties.store().prefix();
        this.timeout = properties.store().timeout();
    }

    /** @return the value at {@code path}, if there is one */
    public Optional<String> get(String path) {
        GetResponse response = await(this.kv.get(key(path)), "read " + path);
        return response.getKvs().stream().findFirst().map(keyValue -> text(keyValue.getValue()));
    }

    /** @return every value whose path starts with {@code pathPrefix}, by path relative to it, in key order */
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

    /** Writes {@code value} at {@code path}, unconditionally. */
    public void put(String path, String value) {
        await(this.kv.put(key(path), bytes(value)), "write " + path);
    }

    /** @return the etcd key of {@code path}, for transactions built on {@link #kv()} */
    public ByteSequence key(String path) {
        return bytes(this.prefix + path);
    }

    /** @return the jetcd KV client, for transactions; pass their futures to {@link #await} */
    public KV kv() {
        return this.kv;
    }

    /**
     * Waits for an etcd request, at most {@code sample.store.timeout}.
     * @param request the request's future
     * @param what what the request does, for the error message
     * @return the response
     * @throws StoreUnavailableException if etcd failed or did not answer in time
     */
    public <T> T await(CompletableFuture<T> request, String what) {
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

    public static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    public static String text(ByteSequence bytes) {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
