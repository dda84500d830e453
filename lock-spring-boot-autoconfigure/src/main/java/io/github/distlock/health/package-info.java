/**
 * The health of an etcd lock registry, as Spring Boot health indicators report it and as
 * operations surfaces learn it without waiting on etcd.
 */
@NullMarked
package io.github.distlock.health;

import org.jspecify.annotations.NullMarked;
