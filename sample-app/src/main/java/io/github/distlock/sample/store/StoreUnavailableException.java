package io.github.distlock.sample.store;

/** The store of the sample's data (etcd, Redis, ZooKeeper or a SQL database) could not be reached or did not answer in time; answered with 503. */
public class StoreUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
