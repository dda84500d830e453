package io.github.distlock;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The locks that {@link io.github.distlock.annotation.DistributedLock @DistributedLock} holds for
 * the calling thread, innermost last.
 *
 * <p>Inside a method annotated with {@code @DistributedLock}, {@link #current()} returns the lock
 * taken for that call and {@link #currentFence()} its fencing token, the number to hand to a
 * resource that must reject writes from a holder whose lock has meanwhile passed to someone else:
 * <pre class="code">
 * &#64;DistributedLock(key = "'invoice:' + #id")
 * public void settle(long id) {
 *     invoices.update(id, LockContext.currentFence());   // rejected if a newer fence has written
 * }
 * </pre>
 *
 * <p>Nested annotated calls stack: the innermost lock is current until its call returns, then the
 * enclosing one is current again. The context is bound to the thread; work handed to another
 * thread does not see it.
 */
public final class LockContext {

    private static final ThreadLocal<Deque<Entry>> ENTRIES = ThreadLocal.withInitial(ArrayDeque::new);

    private LockContext() {
    }

    /**
     * Returns the innermost lock that {@code @DistributedLock} acquired on this thread.
     * @return the lock of the innermost annotated call in progress
     * @throws IllegalStateException if no annotated call holds a lock on this thread
     */
    public static FencedLock current() {
        return innermost().lock;
    }

    /**
     * Returns the fencing token of the innermost lock that {@code @DistributedLock} acquired on
     * this thread, as it was when the lock was acquired.
     * @return the fence of the innermost annotated call in progress
     * @throws IllegalStateException if no annotated call holds a lock on this thread
     */
    public static long currentFence() {
        return innermost().fence;
    }

    /**
     * Makes {@code lock}, which the calling thread must hold, the current lock of this thread
     * until the returned scope is closed. Used by the {@code @DistributedLock} interceptor; code
     * that acquires locks by hand may use it too, so that code it calls sees the lock.
     * @param lock a lock the calling thread holds
     * @return the scope to close, on the same thread, when the lock is released
     * @throws IllegalMonitorStateException if the calling thread does not hold {@code lock}
     */
    public static Scope enter(FencedLock lock) {
        Entry entry = new Entry(lock, lock.getFence());
        ENTRIES.get().push(entry);
        return new Scope(entry);
    }

    private static Entry innermost() {
        Deque<Entry> entries = ENTRIES.get();
        Entry entry = entries.peek();
        if (entry == null) {
            ENTRIES.remove();
            throw new IllegalStateException(
                    "No @DistributedLock lock is held by this thread: LockContext is only available "
                            + "inside a method annotated with @DistributedLock, on the thread that called it");
        }
        return entry;
    }

    /** A lock made current by {@link #enter(FencedLock)}; closing it restores the enclosing one. */
    public static final class Scope implements AutoCloseable {

        private final Entry entry;

        private boolean closed;

        private Scope(Entry entry) {
            this.entry = entry;
        }

        /**
         * Removes this scope's lock from the context. Idempotent.
         * @throws IllegalStateException if called on another thread or while a scope entered
         * later is still open
         */
        @Override
        public void close() {
            if (this.closed) {
                return;
            }
            Deque<Entry> entries = ENTRIES.get();
            if (entries.peek() != this.entry) {
                if (entries.isEmpty()) {
                    ENTRIES.remove();
                }
                throw new IllegalStateException("LockContext scope of lock '" + this.entry.lock.getKey()
                        + "' closed out of order or on another thread");
            }
            entries.pop();
            this.closed = true;
            if (entries.isEmpty()) {
                ENTRIES.remove();
            }
        }
    }

    private record Entry(FencedLock lock, long fence) {
    }
}
