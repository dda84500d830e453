package io.github.distlock.sample;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the sample application, under {@code sample} in {@code application.yml}.
 *
 * @param instanceName name of this instance in responses and logs
 * @param seed whether to create the orders and items below in the shared store at start-up (where missing)
 * @param store where the shared data lives in the lock store (etcd, Redis, ZooKeeper or a SQL database)
 * @param orders the order service
 * @param flashSale the flash sale
 * @param report the scheduled sales report
 * @param hold the endpoint that holds any lock key for a while
 */
@ConfigurationProperties("sample")
public record SampleProperties(String instanceName, boolean seed, Store store, Orders orders, FlashSale flashSale,
        Report report, Hold hold) {

    /**
     * @param prefix key prefix of all sample data in etcd or Redis; in ZooKeeper, the znode they are children of; in a
     * database, the prefix of their rows' paths
     * @param timeout upper bound on each request of the sample's stores (for Redis through spring.data.redis.timeout)
     */
    public record Store(String prefix, Duration timeout) {
    }

    /**
     * @param paymentTime how long the (simulated) payment provider takes to charge an order
     * @param initial orders created at start-up: id to amount
     */
    public record Orders(Duration paymentTime, Map<String, BigDecimal> initial) {
    }

    /**
     * @param lockEnabled whether purchases run under the lock; {@code false} shows the oversell
     * @param waitTimeout how long a purchase waits for the lock of its item
     * @param thinkTime pause between reading and writing the stock, which widens the race window
     * @param initial items created at start-up: SKU to stock
     */
    public record FlashSale(boolean lockEnabled, Duration waitTimeout, Duration thinkTime, Map<String, Integer> initial) {
    }

    /**
     * @param enabled whether the scheduled report runs
     * @param interval how often each instance tries to run it (one tick)
     */
    public record Report(boolean enabled, Duration interval) {
    }

    /**
     * @param maxTime longest hold a request may ask for (whole seconds)
     * @param waitTimeout how long a hold request waits for the lock
     */
    public record Hold(Duration maxTime, Duration waitTimeout) {
    }
}
