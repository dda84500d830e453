/**
 * Holds any lock key for a while on request, so that several instances can be made to queue for
 * one key and the {@code distributedlocks} actuator endpoint shows a holder with its waiters.
 */
package io.github.distlock.sample.hold;
