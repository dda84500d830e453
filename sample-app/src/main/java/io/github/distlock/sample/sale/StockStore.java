package io.github.distlock.sample.sale;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.github.distlock.sample.store.EtcdStore;
import org.springframework.stereotype.Component;

/**
 * Stock levels in etcd, shared by all instances: {@code stock/<sku>} holds the number of items
 * left. Reads and writes are deliberately plain: a read followed by a write is only safe while
 * the item's lock is held.
 */
@Component
public class StockStore {

    private static final String STOCK = "stock/";

    private final EtcdStore store;

    public StockStore(EtcdStore store) {
        this.store = store;
    }

    /** @return the stock of the item, if the item exists */
    public Optional<Integer> get(String sku) {
        return this.store.get(STOCK + sku).map(Integer::valueOf);
    }

    /** Sets the stock of an item, creating the item if needed. */
    public void set(String sku, int stock) {
        this.store.put(STOCK + sku, Integer.toString(stock));
    }

    /**
     * Creates an item unless it exists.
     * @return whether the item was created
     */
    public boolean create(String sku, int stock) {
        ByteSequence key = this.store.key(STOCK + sku);
        return this.store.await(this.store.kv().txn()
            .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
            .Then(Op.put(key, EtcdStore.bytes(Integer.toString(stock)), PutOption.DEFAULT))
            .commit(), "create item " + sku).isSucceeded();
    }

    /** @return the stock of every item, by SKU */
    public Map<String, Integer> all() {
        Map<String, Integer> stock = new LinkedHashMap<>();
        this.store.list(STOCK).forEach((sku, value) -> stock.put(sku, Integer.valueOf(value)));
        return stock;
    }
}
