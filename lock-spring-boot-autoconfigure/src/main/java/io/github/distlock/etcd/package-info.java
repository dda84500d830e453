/**
 * The etcd lock store: {@link io.github.distlock.etcd.EtcdLockRegistry} and the queue protocol,
 * session and watches behind it.
 */
@NullMarked
package io.github.distlock.etcd;

import org.jspecify.annotations.NullMarked;
