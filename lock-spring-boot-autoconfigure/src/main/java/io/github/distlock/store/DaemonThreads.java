package io.github.distlock.store;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories for a registry's own threads. They are daemon threads, so that a registry
 * nobody closed never keeps the JVM from exiting, and named, so that a thread dump says whose
 * they are.
 */
public final class DaemonThreads {

    private DaemonThreads() {
    }

    /**
     * @param name every thread's name, for executors of one thread
     * @return a factory of daemon threads with that name
     */
    public static ThreadFactory named(String name) {
        return runnable -> daemon(runnable, name);
    }

    /**
     * @param prefix the names' start
     * @return a factory of daemon threads named {@code <prefix>-1}, {@code <prefix>-2} and so on
     */
    public static ThreadFactory numbered(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> daemon(runnable, prefix + "-" + count.incrementAndGet());
    }

    private static Thread daemon(Runnable runnable, String name) {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        // Not the priority of whichever thread happened to start it.
        thread.setPriority(Thread.NORM_PRIORITY);
        return thread;
    }
}
