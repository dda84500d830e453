package io.github.distlock.sample.orders;

import java.math.BigDecimal;

import com.fasterxml.jackson.annotation.JsonIgnore;
import org.jspecify.annotations.Nullable;

/**
 * An order, as stored in etcd, Redis, ZooKeeper or a SQL database (JSON).
 *
 * @param id the order id
 * @param amount what the order costs
 * @param status whether it has been paid
 * @param paymentId the payment's id, once paid
 * @param paidBy the instance that took the payment, once paid
 * @param fence the fence of the lock under which the payment was written, once paid
 */
public record Order(String id, BigDecimal amount, Status status, @Nullable String paymentId, @Nullable String paidBy,
        @Nullable Long fence) {

    /** @return a new, unpaid order */
    public static Order create(String id, BigDecimal amount) {
        return new Order(id, amount, Status.NEW, null, null, null);
    }

    /** @return this order, paid */
    public Order paid(String paymentId, String paidBy, long fence) {
        return new Order(this.id, this.amount, Status.PAID, paymentId, paidBy, fence);
    }

    @JsonIgnore
    public boolean isPaid() {
        return this.status == Status.PAID;
    }

    /** Order states. */
    public enum Status {

        NEW, PAID
    }
}
