package io.github.distlock.autoconfigure;

import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Compares {@code distributed-lock.store}, bound like the properties are (so {@code in-memory},
 * {@code IN_MEMORY} and {@code in_memory} are the same), with {@link ConditionalOnStore}.
 * An unknown store fails start-up with the binding error naming the property and the value.
 */
class OnStoreCondition extends SpringBootCondition {

    static final String PROPERTY = "distributed-lock.store";

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Store required = metadata.getAnnotations().get(ConditionalOnStore.class).getEnum("value", Store.class);
        Store configured = Binder.get(context.getEnvironment()).bind(PROPERTY, Store.class).orElse(Store.ETCD);
        ConditionMessage.Builder message = ConditionMessage.forCondition(ConditionalOnStore.class, required);
        return (configured == required) ? ConditionOutcome.match(message.because(PROPERTY + " is " + configured))
                : ConditionOutcome.noMatch(message.because(PROPERTY + " is " + configured));
    }
}
