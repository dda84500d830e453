package io.github.distlock.bench;

import java.util.concurrent.ExecutionException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;

/**
 * The least any etcd lock can do per uncontended acquire and release, as a baseline: a
 * put-if-absent under a lease (a transaction comparing the key's create revision with 0), then a
 * delete. Two consensus writes, no watch, no queue, no fence bookkeeping.
 */
final class RawFloor {

    private static final ByteSequence VALUE = ByteSequence.from(new byte[] { 'x' });

    private final KV kv;

    private final PutOption put;

    RawFloor(KV kv, long leaseId) {
        this.kv = kv;
        this.put = PutOption.builder().withLeaseId(leaseId).build();
    }

    void putIfAbsent(ByteSequence key) throws InterruptedException, ExecutionException {
        TxnResponse response = this.kv.txn()
            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(key, VALUE, this.put))
            .commit()
            .get();
        if (!response.isSucceeded()) {
            // Every thread uses its own key, so a failure means a benchmark bug, not contention.
            throw new IllegalStateException("raw floor key " + key + " already exists");
        }
    }

    void delete(ByteSequence key) throws InterruptedException, ExecutionException {
        this.kv.delete(key).get();
    }

    void cycle(ByteSequence key) throws InterruptedException, ExecutionException {
        putIfAbsent(key);
        delete(key);
    }
}
