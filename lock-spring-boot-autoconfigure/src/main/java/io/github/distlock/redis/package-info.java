/**
 * The Redis store: {@link io.github.distlock.redis.RedisLockRegistry}, a fenced FIFO queue per
 * key kept by Lua scripts on one Redis primary (or one Redis Cluster slot), with liveness keys
 * renewed once per registry and waiters woken by pub/sub.
 */
@NullMarked
package io.github.distlock.redis;

import org.jspecify.annotations.NullMarked;
