package io.github.distlock.sample.orders;

import java.util.Optional;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.github.distlock.sample.NotFoundException;
import io.github.distlock.sample.store.EtcdStore;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Orders in etcd, shared by all instances: {@code orders/<id>} holds the order as JSON and
 * {@code orders/<id>/fence} the fence of the last write.
 *
 * <p><b>Fencing.</b> {@link #save} is accepted only with a fence greater than the one stored, in
 * one etcd transaction. A lock's holder can lose its lock without noticing at once (a long GC
 * pause, a network partition that outlasts its lease); by then another instance may hold the lock
 * and have written newer data, with a greater fence. The stale holder's late write is rejected
 * instead of overwriting that data.
 */
@Component
public class OrderStore {

    /** Fences are stored zero-padded, so that etcd's byte-wise value comparison orders them numerically. */
    private static final String FENCE_FORMAT = "%019d";

    private final EtcdStore store;

    private final JsonMapper json;

    public OrderStore(EtcdStore store, JsonMapper json) {
        this.store = store;
        this.json = json;
    }

    /** @return the order, if it exists */
    public Optional<Order> find(String id) {
        return this.store.get(orderPath(id)).map(value -> this.json.readValue(value, Order.class));
    }

    /**
     * Creates an order unless one with its id exists.
     * @return whether the order was created
     */
    public boolean create(Order order) {
        ByteSequence key = this.store.key(orderPath(order.id()));
        TxnResponse response = this.store.await(this.store.kv().txn()
            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(key, EtcdStore.bytes(this.json.writeValueAsString(order)), PutOption.DEFAULT),
                    Op.put(this.store.key(fencePath(order.id())), fence(0), PutOption.DEFAULT))
            .commit(), "create order " + order.id());
        return response.isSucceeded();
    }

    /**
     * Writes an order if {@code fence} is greater than the fence of the order's last write.
     * @param order the new state of the order
     * @param fence the fence of the lock under which the caller wrote it
     * @throws StaleFenceException if a write with the same or a greater fence was accepted before
     * @throws NotFoundException if the order does not exist
     */
    public void save(Order order, long fence) {
        ByteSequence fenceKey = this.store.key(fencePath(order.id()));
        TxnResponse response = this.store.await(this.store.kv().txn()
            .If(new Cmp(fenceKey, Cmp.Op.LESS, CmpTarget.value(fence(fence))))
            .Then(Op.put(this.store.key(orderPath(order.id())), EtcdStore.bytes(this.json.writeValueAsString(order)),
                    PutOption.DEFAULT), Op.put(fenceKey, fence(fence), PutOption.DEFAULT))
            .Else(Op.get(fenceKey, GetOption.DEFAULT))
            .commit(), "save order " + order.id());
        if (!response.isSucceeded()) {
            ByteSequence stored = response.getGetResponses().get(0).getKvs().stream()
                .findFirst()
                .map(keyValue -> keyValue.getValue())
                .orElseThrow(() -> new NotFoundException("order", order.id()));
            throw new StaleFenceException(order.id(), fence, Long.parseLong(EtcdStore.text(stored)));
        }
    }

    private static String orderPath(String id) {
        return "orders/" + id;
    }

    private static String fencePath(String id) {
        return "orders/" + id + "/fence";
    }

    private static ByteSequence fence(long fence) {
        return EtcdStore.bytes(String.format(FENCE_FORMAT, fence));
    }
}
