package io.github.distlock.sample.sale;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.github.distlock.sample.store.SampleStore;
import org.springframework.stereotype.Component;

/**
 * Stock levels in the shared store, seen by all instances: {@code stock/<sku>} holds the number
 * of items left. Reads and writes are deliberately plain: a read followed by a write is only safe
 * while the item's lock is held.
 */
@Component
public class StockStore {

    private static final String STOCK = "stock/";

    private final SampleStore store;

    public StockStore(SampleStore store) {
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
        return this.store.create(STOCK + sku, Integer.toString(stock));
    }

    /** @return the stock of every item, by SKU */
    public Map<String, Integer> all() {
        Map<String, Integer> stock = new LinkedHashMap<>();
        this.store.list(STOCK).forEach((sku, value) -> stock.put(sku, Integer.valueOf(value)));
        return stock;
    }
}
