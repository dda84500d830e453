/**
 * The distlock sample application.
 */
@NullMarked
package io.github.distlock.sample;

import org.jspecify.annotations.NullMarked;
