/**
 * The sample's shared data in etcd, reached through the jetcd client the starter configures.
 */
@NullMarked
package io.github.distlock.sample.store;

import org.jspecify.annotations.NullMarked;
