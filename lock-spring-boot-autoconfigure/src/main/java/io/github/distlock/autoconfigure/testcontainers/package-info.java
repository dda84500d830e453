/**
 * Testcontainers {@code @ServiceConnection} support for etcd, with spring-boot-testcontainers on
 * the class path.
 */
@NullMarked
package io.github.distlock.autoconfigure.testcontainers;

import org.jspecify.annotations.NullMarked;
