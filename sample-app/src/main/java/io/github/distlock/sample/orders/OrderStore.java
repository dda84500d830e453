package io.github.distlock.sample.orders;

import java.util.Optional;

import io.github.distlock.sample.NotFoundException;
import io.github.distlock.sample.store.SampleStore;
import io.github.distlock.sample.store.SampleStore.FencedWrite;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Orders in the shared store, seen by all instances: {@code orders/<id>} holds the order as JSON,
 * a fenced value ({@link SampleStore#putFenced}).
 *
 * <p><b>Fencing.</b> {@link #save} is accepted only with a fence greater than the one of the last
 * write, in one atomic store operation (an etcd transaction, a Redis script, a ZooKeeper
 * multi-operation, a conditional SQL {@code UPDATE}). A lock's holder can lose its lock without noticing at once (a long GC pause,
 * a network partition that outlasts its lease); by then another instance may hold the lock and
 * have written newer data, with a greater fence. The stale holder's late write is rejected instead of overwriting that data.
 */
@Component
public class OrderStore {

    private final SampleStore store;

    private final JsonMapper json;

    public OrderStore(SampleStore store, JsonMapper json) {
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
        return this.store.createFenced(orderPath(order.id()), this.json.writeValueAsString(order));
    }

    /**
     * Writes an order if {@code fence} is greater than the fence of the order's last write.
     * @param order the new state of the order
     * @param fence the fence of the lock under which the caller wrote it
     * @throws StaleFenceException if a write with the same or a greater fence was accepted before
     * @throws NotFoundException if the order does not exist
     */
    public void save(Order order, long fence) {
        FencedWrite write = this.store.putFenced(orderPath(order.id()), this.json.writeValueAsString(order), fence);
        if (!write.written()) {
            if (write.storedFence() == null) {
                throw new NotFoundException("order", order.id());
            }
            throw new StaleFenceException(order.id(), fence, write.storedFence());
        }
    }

    private static String orderPath(String id) {
        return "orders/" + id;
    }
}
