package io.github.distlock.sample.sale;

/** Fewer items are left than a purchase asks for; answered with 409. */
public class SoldOutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int stockLeft;

    public SoldOutException(String sku, int quantity, int stockLeft) {
        super("Cannot sell " + quantity + " of '" + sku + "': " + stockLeft + " left");
        this.stockLeft = stockLeft;
    }

    /** @return how many items are left */
    public int getStockLeft() {
        return this.stockLeft;
    }
}
