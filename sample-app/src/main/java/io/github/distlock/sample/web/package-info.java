/**
 * HTTP error mapping of the sample.
 */
@NullMarked
package io.github.distlock.sample.web;

import org.jspecify.annotations.NullMarked;
