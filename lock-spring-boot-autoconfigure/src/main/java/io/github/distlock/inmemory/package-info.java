/**
 * The in-memory store: locks shared by the threads of one JVM only, with the semantics of every
 * other store, for tests and single-instance applications.
 */
@NullMarked
package io.github.distlock.inmemory;

import org.jspecify.annotations.NullMarked;
