package io.github.distlock.sample.hold;

/** A hold time outside the allowed range; answered with 400 {@code invalid-seconds}. */
public class InvalidHoldTimeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public InvalidHoldTimeException(String message) {
        super(message);
    }
}
