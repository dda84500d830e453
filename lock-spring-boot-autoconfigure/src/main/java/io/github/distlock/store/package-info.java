/**
 * The store SPI: {@link io.github.distlock.store.LockStore} (session, entries, clean-up, reads of
 * a key's holder) and what a store must promise for each guarantee, with what a store needs from
 * the core: {@link io.github.distlock.store.Wait} (one deadline and interrupt policy per call) and
 * {@link io.github.distlock.store.StoreEvents} (what it counts). It uses only the API.
 */
@NullMarked
package io.github.distlock.store;

import org.jspecify.annotations.NullMarked;
