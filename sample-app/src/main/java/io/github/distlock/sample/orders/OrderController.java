package io.github.distlock.sample.orders;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /orders/{id}} and {@code POST /orders/{id}/pay}. */
@RestController
@RequestMapping("/orders")
class OrderController {

    private final OrderService orders;

    OrderController(OrderService orders) {
        this.orders = orders;
    }

    @GetMapping("/{id}")
    Order get(@PathVariable String id) {
        return this.orders.find(id);
    }

    @PostMapping("/{id}/pay")
    Payment pay(@PathVariable String id) {
        return this.orders.pay(id);
    }
}
