package io.github.distlock.autoconfigure;

import io.github.distlock.aop.NoLockRegistryException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains a start-up that failed because {@code @DistributedLock} methods have no lock registry to lock with. */
class NoLockRegistryFailureAnalyzer extends AbstractFailureAnalyzer<NoLockRegistryException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, NoLockRegistryException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.getAction(), cause);
    }
}
