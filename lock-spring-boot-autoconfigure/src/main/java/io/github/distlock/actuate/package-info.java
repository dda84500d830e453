/**
 * The {@code distributedlocks} actuator endpoint, which shows the holders and waiters of every
 * lock in the etcd namespace.
 */
@NullMarked
package io.github.distlock.actuate;

import org.jspecify.annotations.NullMarked;
