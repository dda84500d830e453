/**
 * The public API of distributed locks: {@link io.github.distlock.LockRegistry} hands out
 * {@link io.github.distlock.FencedLock}s by key, {@link io.github.distlock.LockContext} exposes the
 * lock of the current {@code @DistributedLock} call, and the exceptions say how an acquisition
 * failed or a hold was lost.
 */
@NullMarked
package io.github.distlock;

import org.jspecify.annotations.NullMarked;
