package io.github.distlock;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * {@link FencedMultiLock} over the {@link FencedLock}s of a registry, one per key, taken in key
 * order.
 *
 * <p>Invariants: keys are only ever taken in ascending order (so no two callers wait on each other
 * in a cycle); an acquisition that does not end with every key held has released every key it took
 * before it returns or throws.
 */
final class OrderedMultiLock implements FencedMultiLock {

    private final List<String> keys;

    private final List<FencedLock> locks;

    private final boolean fair;

    OrderedMultiLock(LockRegistry registry, Collection<String> keys, boolean fair) {
        if (keys == null || keys.isEmpty()) {
            throw new IllegalArgumentException("A lock over several keys needs at least one key");
        }
        TreeSet<String> ordered = new TreeSet<>();
        for (String key : keys) {
            if (key == null) {
                throw new IllegalArgumentException("The keys of a lock over several keys must not be null: " + keys);
            }
            ordered.add(key);
        }
        if (ordered.size() > MAX_KEYS) {
            throw new IllegalArgumentException("A lock covers at most " + MAX_KEYS + " keys, but was given "
                    + ordered.size());
        }
        this.keys = List.copyOf(ordered);
        List<FencedLock> locks = new ArrayList<>(this.keys.size());
        for (String key : this.keys) {
            locks.add(registry.obtain(key, fair));
        }
        this.locks = List.copyOf(locks);
        this.fair = fair;
    }

    @Override
    public List<String> getKeys() {
        return this.keys;
    }

    @Override
    public boolean isFair() {
        return this.fair;
    }

    @Override
    public boolean tryLock() {
        List<FencedLock> taken = new ArrayList<>(this.locks.size());
        try {
            for (FencedLock lock : this.locks) {
                if (!lock.tryLock()) {
                    releaseQuietly(taken, null);
                    return false;
                }
                taken.add(lock);
            }
            return true;
        }
        catch (RuntimeException | Error ex) {
            releaseQuietly(taken, ex);
            throw ex;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(Math.max(0, time));
        List<FencedLock> taken = new ArrayList<>(this.locks.size());
        try {
            for (FencedLock lock : this.locks) {
                // One wait for all keys: each gets what is left of it (a key reached late tries once).
                if (!lock.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    releaseQuietly(taken, null);
                    return false;
                }
                taken.add(lock);
            }
            return true;
        }
        catch (InterruptedException | RuntimeException | Error ex) {
            releaseQuietly(taken, ex);
            throw ex;
        }
    }

    @Override
    public void lock() {
        List<FencedLock> taken = new ArrayList<>(this.locks.size());
        try {
            for (FencedLock lock : this.locks) {
                lock.lock();
                taken.add(lock);
            }
        }
        catch (RuntimeException | Error ex) {
            releaseQuietly(taken, ex);
            throw ex;
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        List<FencedLock> taken = new ArrayList<>(this.locks.size());
        try {
            for (FencedLock lock : this.locks) {
                lock.lockInterruptibly();
                taken.add(lock);
            }
        }
        catch (InterruptedException | RuntimeException | Error ex) {
            releaseQuietly(taken, ex);
            throw ex;
        }
    }

    @Override
    public void unlock() {
        for (FencedLock lock : this.locks) {
            if (lock.getHoldCount() == 0) {
                // Releasing the others would take holds the thread has of them on its own.
                throw new IllegalMonitorStateException("The current thread does not hold key '" + lock.getKey()
                        + "' of " + this.keys);
            }
        }
        // Every key is released whatever one of them throws; a lost hold is the failure reported first.
        RuntimeException lost = null;
        Throwable other = null;
        for (int i = this.locks.size() - 1; i >= 0; i--) {
            try {
                this.locks.get(i).unlock();
            }
            catch (LockLostException ex) {
                lost = keep(lost, ex);
            }
            catch (RuntimeException | Error ex) {
                other = keep(other, ex);
            }
        }
        Throwable failure = (lost != null) ? lost : other;
        if (failure != null && other != null && failure != other) {
            failure.addSuppressed(other);
        }
        if (failure instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (failure instanceof Error error) {
            throw error;
        }
    }

    private static <T extends Throwable> T keep(@Nullable T first, T next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    @Override
    public boolean isLockedByCurrentThread() {
        return this.locks.stream().allMatch(FencedLock::isLockedByCurrentThread);
    }

    @Override
    public Map<String, Long> getFences() {
        Map<String, Long> fences = new LinkedHashMap<>();
        for (FencedLock lock : this.locks) {
            fences.put(lock.getKey(), lock.getFence());
        }
        return Collections.unmodifiableMap(fences);
    }

    /**
     * Releases what a failed or abandoned acquisition took, last first. A hold lost meanwhile was
     * reported to the registry's loss listeners already; it is kept with {@code failure} if there is one.
     */
    private static void releaseQuietly(List<FencedLock> taken, @Nullable Throwable failure) {
        for (int i = taken.size() - 1; i >= 0; i--) {
            try {
                taken.get(i).unlock();
            }
            catch (RuntimeException | Error ex) {
                if (failure != null) {
                    failure.addSuppressed(ex);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "FencedMultiLock" + this.keys + (this.fair ? " (fair)" : "");
    }
}
