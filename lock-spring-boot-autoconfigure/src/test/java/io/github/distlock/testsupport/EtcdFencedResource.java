package io.github.distlock.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;

/**
 * A resource in etcd that accepts a write only if its fence is greater than every fence it has
 * accepted before, so that a stale lock holder cannot overwrite newer data.
 *
 * <p>The highest accepted fence is stored under {@code <name>/fence} as a 19-digit zero-padded decimal,
 * so byte order equals numeric order and one etcd transaction can compare and write atomically:
 * {@code if stored fence < new fence then put fence, put data}. A resource never written has no
 * fence key; its first write is a transaction on the key's version being 0.
 */
public final class EtcdFencedResource implements FencedResource {

    private static final long TIMEOUT_SECONDS = 10;

    private final Client client;

    private final ByteSequence fenceKey;

    private final ByteSequence dataKey;

    public EtcdFencedResource(Client client, String name) {
        this.client = client;
        this.fenceKey = bytes(name + "/fence");
        this.dataKey = bytes(name + "/data");
    }

    @Override
    public boolean write(long fence, String data) {
        if (fence <= 0) {
            throw new IllegalArgumentException("fence must be positive, but was " + fence);
        }
        ByteSequence newFence = bytes(String.format("%019d", fence));
        Op[] puts = { Op.put(this.fenceKey, newFence, PutOption.DEFAULT),
                Op.put(this.dataKey, bytes(data), PutOption.DEFAULT) };
        while (true) {
            TxnResponse higher = await(this.client.getKVClient().txn()
                .If(new Cmp(this.fenceKey, Cmp.Op.LESS, CmpTarget.value(newFence)))
                .Then(puts)
                .commit());
            if (higher.isSucceeded()) {
                return true;
            }
            // Either the stored fence is not lower, or there is none yet (a value compare on a missing
            // key always fails in etcd): create it, unless another writer did in between.
            TxnResponse first = await(this.client.getKVClient().txn()
                .If(new Cmp(this.fenceKey, Cmp.Op.EQUAL, CmpTarget.version(0)))
                .Then(puts)
                .commit());
            if (first.isSucceeded()) {
                return true;
            }
            long stored = storedFence();
            if (stored >= fence) {
                return false;
            }
            // The stored fence changed between the two transactions and is still lower: try again.
        }
    }

    @Override
    public long storedFence() {
        String value = read(this.fenceKey);
        return (value != null) ? Long.parseLong(value) : 0;
    }

    @Override
    public String data() {
        return read(this.dataKey);
    }

    private String read(ByteSequence key) {
        var kvs = await(this.client.getKVClient().get(key)).getKvs();
        if (kvs.isEmpty()) {
            return null;
        }
        KeyValue kv = kvs.get(0);
        return kv.getValue().toString(StandardCharsets.UTF_8);
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> future) {
        try {
            return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
        catch (ExecutionException | TimeoutException ex) {
            throw new IllegalStateException("etcd call failed: " + ex, ex);
        }
    }

    private static ByteSequence bytes(String value) {
        return ByteSequence.from(value, StandardCharsets.UTF_8);
    }
}
