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
        super(where(endpoints) + " could not be reached at start-up (distributed-lock.etcd.fail-fast=true): "
                + cause.getMessage(), cause);
        this.endpoints = List.copyOf(endpoints);
    }

    /**
     * @param endpoints the configured endpoints, or none for the application's own client
     * @return what the registry tried to reach
     */
    static String where(List<String> endpoints) {
        return endpoints.isEmpty() ? "etcd (through the application's io.etcd.jetcd.Client bean)"
                : "etcd at " + endpoints;
    }

    /** @return the configured endpoints, or an empty list if the registry uses the application's own client */
    public List<String> getEndpoints() {
        return this.endpoints;
    }
}
