/**
 * The command-line fairness demo: several processes contend for one key, once with fair and once
 * with unfair locks, and a summary compares the order in which workers arrived with the order in
 * which they got the lock.
 */
@NullMarked
package io.github.distlock.sample.demo;

import org.jspecify.annotations.NullMarked;
