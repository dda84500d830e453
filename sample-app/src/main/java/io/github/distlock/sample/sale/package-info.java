/**
 * A flash sale whose stock, decremented by a plain read-then-write, stays exact under an unfair
 * lock per item.
 */
@NullMarked
package io.github.distlock.sample.sale;

import org.jspecify.annotations.NullMarked;
