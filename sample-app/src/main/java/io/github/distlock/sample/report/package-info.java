/**
 * A scheduled job that runs on exactly one instance per tick.
 */
@NullMarked
package io.github.distlock.sample.report;

import org.jspecify.annotations.NullMarked;
