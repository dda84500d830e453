package io.github.distlock.autoconfigure.app;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import org.springframework.stereotype.Service;

/** Reserves items one caller at a time per item, across every instance. */
@Service
public class Inventory {

    /**
     * Reserves an item.
     * @param item the item
     * @return the fence of the lock the reservation ran under
     */
    @DistributedLock(key = "'item:' + #item")
    public long reserve(String item) {
        return LockContext.currentFence();
    }

    /**
     * Reserves an item without waiting for another reservation of it.
     * @param item the item
     * @return the fence of the lock the reservation ran under
     */
    @DistributedLock(key = "'item:' + #item", waitTimeout = "0")
    public long reserveNow(String item) {
        return LockContext.currentFence();
    }

    /**
     * Holds the lock of an item until {@code release} opens.
     * @param item the item
     * @param held opened once the lock is held
     * @param release what to wait for before returning
     * @return the fence of the lock
     * @throws InterruptedException if interrupted while holding
     */
    @DistributedLock(key = "'item:' + #item")
    public long hold(String item, CountDownLatch held, CountDownLatch release) throws InterruptedException {
        held.countDown();
        release.await(30, TimeUnit.SECONDS);
        return LockContext.currentFence();
    }
}
