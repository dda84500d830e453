package io.github.distlock.sample.sale;

/** A quantity below the allowed minimum; answered with 400. */
public class InvalidQuantityException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public InvalidQuantityException(String message) {
        super(message);
    }
}
