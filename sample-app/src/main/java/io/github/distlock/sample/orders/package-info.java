/**
 * Orders whose payment runs under a fair lock per order, is idempotent and is written with the
 * lock's fence.
 */
@NullMarked
package io.github.distlock.sample.orders;

import org.jspecify.annotations.NullMarked;
