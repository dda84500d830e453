package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed because etcd was unreachable with fail-fast set, and what to
 * do about it.
 */
class EtcdUnreachableFailureAnalyzer extends AbstractFailureAnalyzer<EtcdUnreachableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, EtcdUnreachableException cause) {
        boolean ownClient = cause.getEndpoints().isEmpty();
        String description = "The distributed lock store could not reach "
                + EtcdUnreachableException.where(cause.getEndpoints()) + ": "
                + ((cause.getCause() != null) ? cause.getCause().getMessage() : cause.getMessage());
        String action = "Check that etcd is running and reachable "
                + ((ownClient) ? "where the application's etcd Client bean connects (its endpoints, TLS and "
                        + "credentials)" : "at distributed-lock.etcd.endpoints (and that distributed-lock.etcd.tls and "
                                + "the credentials match it)")
                + ", or set distributed-lock.etcd.fail-fast=false to start without etcd and connect on the first "
                + "acquisition.";
        return new FailureAnalysis(description, action, cause);
    }
}
