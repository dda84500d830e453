package io.github.distlock.sample.sale;

import java.time.Duration;

import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.sample.NotFoundException;
import io.github.distlock.sample.SampleProperties;
import org.springframework.stereotype.Service;

/**
 * Sells items from a limited stock shared by all instances. A purchase reads the stock, checks it,
 * and writes it back decremented: two steps that, run concurrently, sell the same items twice.
 * {@link #buy} runs them under the item's lock, so the stock is exact; {@link #buyWithoutLock} shows
 * what happens without it.
 */
@Service
public class FlashSaleService {

    private final StockStore stock;

    private final String instance;

    private final Duration thinkTime;

    public FlashSaleService(StockStore stock, SampleProperties properties) {
        this.stock = stock;
        this.instance = properties.instanceName();
        this.thinkTime = properties.flashSale().thinkTime();
    }

    /**
     * Buys {@code quantity} items under the item's lock (unfair: the sale wants throughput, not
     * arrival order).
     * @throws SoldOutException if fewer items are left
     * @throws NotFoundException if there is no such item
     */
    @DistributedLock(key = "'stock:' + #sku", waitTimeout = "${sample.flash-sale.wait-timeout}")
    public Purchase buy(String sku, int quantity) {
        return takeFromStock(sku, quantity);
    }

    /** The same purchase without the lock: concurrent buyers oversell. For demonstration only. */
    public Purchase buyWithoutLock(String sku, int quantity) {
        return takeFromStock(sku, quantity);
    }

    /** Sets an item's stock (creating the item), under the same lock as purchases. */
    @DistributedLock(key = "'stock:' + #sku", waitTimeout = "${sample.flash-sale.wait-timeout}")
    public Item restock(String sku, int quantity) {
        this.stock.set(sku, quantity);
        return new Item(sku, quantity);
    }

    /** @return the item and its stock */
    public Item find(String sku) {
        return new Item(sku, this.stock.get(sku).orElseThrow(() -> new NotFoundException("item", sku)));
    }

    private Purchase takeFromStock(String sku, int quantity) {
        int left = this.stock.get(sku).orElseThrow(() -> new NotFoundException("item", sku));
        if (left < quantity) {
            throw new SoldOutException(sku, quantity, left);
        }
        pause(); // e.g. reserving with the warehouse: without the lock, others read the same stock meanwhile
        this.stock.set(sku, left - quantity);
        return new Purchase(sku, quantity, left - quantity, this.instance);
    }

    private void pause() {
        try {
            Thread.sleep(this.thinkTime.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted during a purchase", ex);
        }
    }

    /**
     * An item of the sale.
     * @param sku the item's SKU
     * @param stock how many are left
     */
    public record Item(String sku, int stock) {
    }

    /**
     * A successful purchase.
     * @param sku the item bought
     * @param quantity how many
     * @param stockLeft the stock after this purchase
     * @param soldBy the instance that sold it
     */
    public record Purchase(String sku, int quantity, int stockLeft, String soldBy) {
    }
}
