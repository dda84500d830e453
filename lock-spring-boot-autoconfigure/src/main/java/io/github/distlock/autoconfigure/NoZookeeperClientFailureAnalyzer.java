package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed because {@code distributed-lock.store=zookeeper} found no
 * Curator on the class path, and what to add.
 */
class NoZookeeperClientFailureAnalyzer extends AbstractFailureAnalyzer<NoZookeeperClientException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoZookeeperClientException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
    }
}
