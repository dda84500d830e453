package io.github.distlock.sample.orders;

import org.springframework.util.Assert;

/**
 * The answer to a payment request.
 *
 * @param orderId the order
 * @param outcome {@code PAID} if this request paid it, {@code ALREADY_PAID} if an earlier one did
 * @param paymentId the payment's id (the same for every request of one order)
 * @param paidBy the instance that took the payment
 * @param fence the fence under which the payment was written
 * @param answeredBy the instance that answered this request
 */
public record Payment(String orderId, Outcome outcome, String paymentId, String paidBy, long fence,
        String answeredBy) {

    /** @param order a paid order, which has a payment id, a payer and a fence */
    static Payment of(Order order, Outcome outcome, String answeredBy) {
        String paymentId = order.paymentId();
        String paidBy = order.paidBy();
        Long fence = order.fence();
        Assert.state(paymentId != null && paidBy != null && fence != null, () -> order.id() + " is not paid");
        return new Payment(order.id(), outcome, paymentId, paidBy, fence, answeredBy);
    }

    /** What a payment request did. */
    public enum Outcome {

        PAID, ALREADY_PAID
    }
}
