/**
 * The {@code distributedlocks} actuator endpoint, which shows the holders and waiters of every
 * lock in the store namespace.
 */
@NullMarked
package io.github.distlock.actuate;

import org.jspecify.annotations.NullMarked;
