/**
 * The health of a lock registry (etcd, Redis, ZooKeeper, JDBC, or any
 * {@link io.github.distlock.InspectableLockRegistry}), as Spring Boot health indicators report
 * it and as operations surfaces learn it without waiting on the store.
 */
@NullMarked
package io.github.distlock.health;

import org.jspecify.annotations.NullMarked;
