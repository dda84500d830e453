/**
 * The lock semantics of every registry, written once over a {@link io.github.distlock.store.LockStore}:
 * holds and reentrancy, the unfair local gate, {@link io.github.distlock.core.Wait} (deadline and
 * interruption), loss reporting and statistics.
 */
@NullMarked
package io.github.distlock.core;

import org.jspecify.annotations.NullMarked;
