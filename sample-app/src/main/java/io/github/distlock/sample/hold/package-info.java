/**
 * Holds any lock key for a while on request, so that several instances can be made to queue for
 * one key and the {@code distributedlocks} actuator endpoint shows a holder with its waiters.
 */
@NullMarked
package io.github.distlock.sample.hold;

import org.jspecify.annotations.NullMarked;
