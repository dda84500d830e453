package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed because {@code distributed-lock.store=redis} found no Redis
 * connection it can use, and what to add.
 */
class NoRedisConnectionFailureAnalyzer extends AbstractFailureAnalyzer<NoRedisConnectionException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoRedisConnectionException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
    }
}
