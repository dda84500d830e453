/**
 * A flash sale whose stock, decremented by a plain read-then-write, stays exact under an unfair
 * lock per item.
 */
package io.github.distlock.sample.sale;
