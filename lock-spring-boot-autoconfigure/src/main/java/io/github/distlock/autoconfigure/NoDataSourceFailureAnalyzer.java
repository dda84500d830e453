package io.github.distlock.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed because {@code distributed-lock.store=jdbc} found no DataSource it
 * can use, and what to add.
 */
class NoDataSourceFailureAnalyzer extends AbstractFailureAnalyzer<NoDataSourceException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoDataSourceException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
    }
}
