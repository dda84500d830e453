package io.github.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;

/**
 * Matches unless {@code distributed-lock.enabled} is {@code false}: the one switch that every
 * distributed-lock auto-configuration obeys.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@interface ConditionalOnDistributedLockEnabled {

}
