package io.github.distlock.sample.orders;

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

    static Payment of(Order order, Outcome outcome, String answeredBy) {
        return new Payment(order.id(), outcome, order.paymentId(), order.paidBy(), order.fence(), answeredBy);
    }

    /** What a payment request did. */
    public enum Outcome {

        PAID, ALREADY_PAID
    }
}
