package io.github.distlock.autoconfigure;

import io.github.distlock.aop.InvalidLockOperationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a start-up that failed on a {@code @DistributedLock} annotation that cannot work as
 * written: which method, what is wrong, what to do, instead of a bean-creation stack trace.
 */
class InvalidLockOperationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLockOperationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidLockOperationException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
    }
}
