/**
 * The sample's shared data, in the store that keeps the locks: etcd through the jetcd client the
 * starter configures, Redis through Spring Boot's Redis connection, ZooKeeper through the Curator
 * client the starter configures, or a SQL database through the application's DataSource.
 */
@NullMarked
package io.github.distlock.sample.store;

import org.jspecify.annotations.NullMarked;
