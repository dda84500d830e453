/**
 * The lock registry as a Spring Integration {@code LockRegistry}, for leader election
 * ({@code LockRegistryLeaderInitiator}), aggregators and {@code LockRequestHandlerAdvice}; the only
 * package that uses Spring Integration.
 */
@NullMarked
package io.github.distlock.integration;

import org.jspecify.annotations.NullMarked;
