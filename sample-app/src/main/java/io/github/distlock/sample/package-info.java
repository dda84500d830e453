/**
 * The distlock sample application.
 */
package io.github.distlock.sample;
