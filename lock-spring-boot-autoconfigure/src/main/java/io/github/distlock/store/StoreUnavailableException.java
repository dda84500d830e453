package io.github.distlock.store;

import org.jspecify.annotations.Nullable;

/** A store call failed or got no answer in time. */
public class StoreUnavailableException extends Exception {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause the client library's failure, if any
     */
    public StoreUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
