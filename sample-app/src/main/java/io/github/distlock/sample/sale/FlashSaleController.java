package io.github.distlock.sample.sale;

import io.github.distlock.sample.SampleProperties;
import io.github.distlock.sample.sale.FlashSaleService.Item;
import io.github.distlock.sample.sale.FlashSaleService.Purchase;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /items/{sku}}, {@code POST /items/{sku}/buy?quantity=N} and
 * {@code PUT /items/{sku}/stock?quantity=N}. {@code sample.flash-sale.lock-enabled=false} makes
 * purchases skip the lock, to show the oversell it prevents.
 */
@RestController
@RequestMapping("/items")
class FlashSaleController {

    private final FlashSaleService sale;

    private final boolean lockEnabled;

    FlashSaleController(FlashSaleService sale, SampleProperties properties) {
        this.sale = sale;
        this.lockEnabled = properties.flashSale().lockEnabled();
    }

    @GetMapping("/{sku}")
    Item get(@PathVariable String sku) {
        return this.sale.find(sku);
    }

    @PostMapping("/{sku}/buy")
    Purchase buy(@PathVariable String sku, @RequestParam(defaultValue = "1") int quantity) {
        check(quantity, 1);
        return this.lockEnabled ? this.sale.buy(sku, quantity) : this.sale.buyWithoutLock(sku, quantity);
    }

    @PutMapping("/{sku}/stock")
    Item restock(@PathVariable String sku, @RequestParam int quantity) {
        check(quantity, 0);
        return this.sale.restock(sku, quantity);
    }

    private static void check(int quantity, int minimum) {
        if (quantity < minimum) {
            throw new InvalidQuantityException("quantity must be at least " + minimum + ", got " + quantity);
        }
    }
}
