/**
 * The store SPI: {@link io.github.distlock.store.LockStore} (session, entries, clean-up, reads of
 * a key's holder) and what a store must promise for each guarantee.
 */
@NullMarked
package io.github.distlock.store;

import org.jspecify.annotations.NullMarked;
