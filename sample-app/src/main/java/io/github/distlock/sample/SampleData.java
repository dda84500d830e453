package io.github.distlock.sample;

import io.github.distlock.sample.orders.Order;
import io.github.distlock.sample.orders.OrderStore;
import io.github.distlock.sample.sale.StockStore;
import io.github.distlock.sample.store.StoreUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;

/**
 * Creates the orders and items listed under {@code sample.orders.initial} and
 * {@code sample.flash-sale.initial} at start-up, where they do not exist yet, so that every
 * instance may start first without overwriting what others changed. Disabled with
 * {@code sample.seed=false}. An unreachable store does not stop the application: it answers 503
 * until the store is back.
 */
@Component
class SampleData implements ApplicationRunner {

    private static final Logger logger = LoggerFactory.getLogger(SampleData.class);

    private final SampleProperties properties;

    private final OrderStore orders;

    private final StockStore stock;

    SampleData(SampleProperties properties, OrderStore orders, StockStore stock) {
        this.properties = properties;
        this.orders = orders;
        this.stock = stock;
    }

    @Override
    public void run(ApplicationArguments args) {
        if (!this.properties.seed()) {
            return;
        }
        try {
            this.properties.orders().initial().forEach((id, amount) -> this.orders.create(Order.create(id, amount)));
            this.properties.flashSale().initial().forEach(this.stock::create);
            logger.info("Sample data ready: orders {}, items {}", this.properties.orders().initial().keySet(),
                    this.properties.flashSale().initial().keySet());
        }
        catch (StoreUnavailableException ex) {
            logger.warn("Could not create the sample data: {}", ex.getMessage());
        }
    }
}
