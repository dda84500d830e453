/**
 * What a web application answers when a lock cannot be had: RFC 9457 problem details with an
 * HTTP status a client can act on.
 */
@NullMarked
package io.github.distlock.web;

import org.jspecify.annotations.NullMarked;
