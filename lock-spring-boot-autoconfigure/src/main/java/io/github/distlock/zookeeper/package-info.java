/**
 * The ZooKeeper store: {@link io.github.distlock.zookeeper.ZookeeperLockRegistry}, ephemeral
 * sequential entries under one container node per key, each waiter watching its predecessor, on
 * the application's Curator client.
 */
@NullMarked
package io.github.distlock.zookeeper;

import org.jspecify.annotations.NullMarked;
