package io.github.distlock.sample.orders;

import java.time.Duration;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.sample.NotFoundException;
import io.github.distlock.sample.SampleProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

/**
 * Pays orders exactly once, whichever instance a request reaches and however often it is retried.
 */
@Service
public class OrderService {

    private static final Logger logger = LoggerFactory.getLogger(OrderService.class);

    private final OrderStore orders;

    private final String instance;

    private final Duration paymentTime;

    public OrderService(OrderStore orders, SampleProperties properties) {
        this.orders = orders;
        this.instance = properties.instanceName();
        this.paymentTime = properties.orders().paymentTime();
    }

    /** @return the order */
    public Order find(String orderId) {
        return this.orders.find(orderId).orElseThrow(() -> new NotFoundException("order", orderId));
    }

    /**
     * Pays an order, unless it is paid already. Requests for one order run one at a time, in the
     * order they arrived, across all instances; each waits at most 10 s, then fails with
     * {@link io.github.distlock.LockAcquisitionException} naming the holder (409). The payment is
     * written with the lock's fence, so a holder that lost its lock meanwhile cannot overwrite a
     * newer write ({@link StaleFenceException}).
     * @return the payment, new or earlier
     */
    @DistributedLock(key = "#orderId", fair = true, waitTimeout = "10s")
    public Payment pay(String orderId) {
        Order order = find(orderId);
        if (order.isPaid()) {
            return Payment.of(order, Payment.Outcome.ALREADY_PAID, this.instance);
        }
        long fence = LockContext.currentFence();
        String paymentId = "pay-" + orderId + "-" + fence;
        charge(order, paymentId);
        Order paid = order.paid(paymentId, this.instance, fence);
        this.orders.save(paid, fence);
        logger.info("Order {} paid on {} (payment {}, fence {})", orderId, this.instance, paymentId, fence);
        return Payment.of(paid, Payment.Outcome.PAID, this.instance);
    }

    /** Stands in for the call to a payment provider (which would get the payment id as its idempotency key). */
    private void charge(Order order, String paymentId) {
        try {
            Thread.sleep(this.paymentTime.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while charging order " + order.id(), ex);
        }
    }
}
