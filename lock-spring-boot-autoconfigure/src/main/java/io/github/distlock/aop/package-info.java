/**
 * The advice that runs {@code @DistributedLock} methods under their lock: parsing and caching
 * each method's operation, evaluating keys, handling timeouts and lost locks, and reporting to
 * {@link io.github.distlock.aop.LockMetrics}; independent of any lock store and metrics library.
 */
@NullMarked
package io.github.distlock.aop;

import org.jspecify.annotations.NullMarked;
