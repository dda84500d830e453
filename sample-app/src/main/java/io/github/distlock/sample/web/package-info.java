/**
 * HTTP error mapping of the sample.
 */
package io.github.distlock.sample.web;
