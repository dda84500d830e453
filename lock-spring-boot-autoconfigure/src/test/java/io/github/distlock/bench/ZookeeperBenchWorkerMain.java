package io.github.distlock.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * A contender in its own JVM for the ZooKeeper benchmarks: one Curator client with one registry
 * and Curator's {@link InterProcessMutex} on it, driven over stdin.
 *
 * <p>Arguments: {@code <connect string> <namespace> <name>}. Commands, one per line:
 * {@code LOOP <run> <fair|unfair|curator-mutex> <key> <window start> <window end> <stop at> <file>}:
 * acquire and release {@code key} back to back with an empty critical section until {@code stop at},
 * write {@code <acquired> <released>} for every acquisition that returned inside the window to
 * {@code file}, then print {@code DONE <run> <count>}. Times are {@link System#nanoTime()} values,
 * the machine's monotonic clock in every JVM on Linux. The JVM exits when its stdin ends.
 */
public final class ZookeeperBenchWorkerMain {

    private ZookeeperBenchWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework client = startedClient(args[0]);
        ZookeeperLockRegistry registry = ZookeeperLockRegistry.builder(client).namespace(args[1])
            .ownerIdentity(args[2]).build();
        registry.connect().get();
        Map<String, Lock> mutexes = new HashMap<>();
        System.out.println("READY " + args[2]);
        Records.serveLoopCommands((mode, key) -> switch (mode) {
            case "fair" -> registry.obtain(key, true);
            case "unfair" -> registry.obtain(key, false);
            case "curator-mutex" -> mutexes.computeIfAbsent(key,
                    k -> new CuratorMutex(new InterProcessMutex(client, "/bench-curator/" + k)));
            default -> throw new IllegalArgumentException("unknown mode: " + mode);
        });
        registry.close();
        client.close();
    }

    static CuratorFramework startedClient(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, 10_000, 5_000,
                new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("No connection to ZooKeeper at " + connectString);
        }
        return client;
    }

    /** Curator's mutex as a {@link Lock}, for the loops that take any lock. */
    static final class CuratorMutex implements Lock {

        private final InterProcessMutex mutex;

        CuratorMutex(InterProcessMutex mutex) {
            this.mutex = mutex;
        }

        @Override
        public void lock() {
            try {
                this.mutex.acquire();
            }
            catch (Exception ex) {
                throw new IllegalStateException("InterProcessMutex.acquire() failed", ex);
            }
        }

        @Override
        public void unlock() {
            try {
                this.mutex.release();
            }
            catch (Exception ex) {
                throw new IllegalStateException("InterProcessMutex.release() failed", ex);
            }
        }

        @Override
        public void lockInterruptibly() {
            lock();
        }

        @Override
        public boolean tryLock() {
            return tryLock(0, TimeUnit.MILLISECONDS);
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) {
            try {
                return this.mutex.acquire(time, unit);
            }
            catch (Exception ex) {
                throw new IllegalStateException("InterProcessMutex.acquire(time) failed", ex);
            }
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("A distributed mutex has no conditions");
        }
    }
}
