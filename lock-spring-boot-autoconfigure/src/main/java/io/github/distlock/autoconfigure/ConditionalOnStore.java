package io.github.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when {@code distributed-lock.store} is the given store ({@code etcd} if unset).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(OnStoreCondition.class)
@interface ConditionalOnStore {

    /** @return the store that makes the condition match */
    DistributedLockProperties.Store value();
}
