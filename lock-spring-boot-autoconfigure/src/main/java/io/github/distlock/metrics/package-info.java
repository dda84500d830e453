/**
 * Micrometer meters of {@code @DistributedLock} calls and of the lock registries; the only
 * package that uses Micrometer.
 */
@NullMarked
package io.github.distlock.metrics;

import org.jspecify.annotations.NullMarked;
