/**
 * A scheduled job that runs on exactly one instance per tick.
 */
package io.github.distlock.sample.report;
