/**
 * Spring Boot auto-configuration of distributed locks and its {@code distributed-lock.*}
 * properties, with an auto-configuration of its own for health, metrics and the endpoint.
 */
@NullMarked
package io.github.distlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
