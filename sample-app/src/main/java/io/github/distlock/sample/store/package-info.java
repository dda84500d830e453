/**
 * The sample's shared data, in the store that keeps the locks: etcd through the jetcd client the
 * starter configures, or Redis through Spring Boot's Redis connection.
 */
@NullMarked
package io.github.distlock.sample.store;

import org.jspecify.annotations.NullMarked;
