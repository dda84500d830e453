/**
 * The lock semantics of every registry, written once over a {@link io.github.distlock.store.LockStore}:
 * holds and reentrancy, the unfair local gate, local handoffs, waiting within a
 * {@link io.github.distlock.store.Wait}, loss reporting and the counters behind
 * {@link io.github.distlock.LockStatistics}. It uses the store SPI and the API, no store client.
 */
@NullMarked
package io.github.distlock.core;

import org.jspecify.annotations.NullMarked;
