/**
 * Docker Compose service connection support for etcd, with spring-boot-docker-compose on the
 * class path.
 */
@NullMarked
package io.github.distlock.autoconfigure.docker.compose;

import org.jspecify.annotations.NullMarked;
