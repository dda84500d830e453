/**
 * The sample's shared data, in the store that keeps the locks: etcd through the jetcd client the
 * starter configures, Redis through Spring Boot's Redis connection, or ZooKeeper through the Curator
 * client the starter configures.
 */
@NullMarked
package io.github.distlock.sample.store;

import org.jspecify.annotations.NullMarked;
