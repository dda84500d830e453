/**
 * The {@link io.github.distlock.annotation.DistributedLock @DistributedLock} annotation and the
 * policies it names for timeouts and lost locks.
 */
@NullMarked
package io.github.distlock.annotation;

import org.jspecify.annotations.NullMarked;
