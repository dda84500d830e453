package io.github.distlock.autoconfigure;

import java.util.List;

/**
 * etcd could not be reached at start-up and {@code distributed-lock.etcd.fail-fast} is set.
 */
public class EtcdUnreachableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final List<String> endpoints;

    /**
     * Creates an exception.
     * @param endpoints the configured endpoints
     * @param cause why etcd could not be reached
     */
    public EtcdUnreachableException(List<String> endpoints, Throwable cause) {
        super("etcd at " + endpoints + " could not be reached at start-up (distributed-lock.etcd.fail-fast=true): "
                + cause.getMessage(), cause);
        this.endpoints = List.copyOf(endpoints);
    }

    /** @return the configured endpoints */
    public List<String> getEndpoints() {
        return this.endpoints;
    }
}
