/**
 * The sample's shared data in etcd, reached through the jetcd client the starter configures.
 */
package io.github.distlock.sample.store;
