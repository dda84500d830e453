package io.github.distlock.bench;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;

/**
 * Scenario 6: what 10,000 locks held at once by one registry cost in this JVM (heap after a full
 * GC, live threads) and in etcd (leases attached to the held entries). The registry is warmed up
 * first, so its session lease, watch stream and scheduler thread are part of the baseline; the
 * holding threads exist before the baseline too, so only what the locks add is counted.
 */
final class ResourcesScenario {

    private static final int LOCKS = 10_000;

    private static final int HOLDERS = 8;

    private static final long HOLD_TIMEOUT_SECONDS = 120;

    private ResourcesScenario() {
    }

    static void run(Client client, ResultTable table) throws Exception {
        System.out.println("[bench] scenario 6: " + LOCKS + " locks held at once");
        try (EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace("/bench/s6/")
            .ownerIdentity("bench-s6")
            .build()) {
            FencedLock warmup = registry.obtain("warm-up");
            warmup.lock();
            warmup.unlock();
            CountDownLatch start = new CountDownLatch(1);
            CountDownLatch holding = new CountDownLatch(HOLDERS);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> holders = new ArrayList<>();
            for (int h = 0; h < HOLDERS; h++) {
                int holder = h;
                Thread thread = new Thread(() -> holdShare(registry, holder, start, holding, release, failure),
                        "bench-s6-" + h);
                holders.add(thread);
                thread.start();
            }
            long heapBefore = usedHeapAfterGc();
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            start.countDown();
            if (!holding.await(HOLD_TIMEOUT_SECONDS, TimeUnit.SECONDS) || failure.get() != null) {
                release.countDown();
                throw new IllegalStateException("scenario 6: holders did not acquire their locks", failure.get());
            }
            long heapHolding = usedHeapAfterGc();
            int threadsHolding = ManagementFactory.getThreadMXBean().getThreadCount();
            List<KeyValue> entries = client.getKVClient()
                .get(ByteSequence.from("/bench/s6/", StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).build())
                .get()
                .getKvs();
            long leases = entries.stream().mapToLong(KeyValue::getLease).distinct().count();
            release.countDown();
            for (Thread thread : holders) {
                thread.join();
            }
            if (entries.size() != LOCKS) {
                throw new IllegalStateException("scenario 6: expected " + LOCKS + " entries in etcd, found "
                        + entries.size());
            }
            double bytesPerLock = (double) (heapHolding - heapBefore) / LOCKS;
            int addedThreads = threadsHolding - threadsBefore;
            table.add("6", "10,000 locks held by one registry: heap",
                    ResultTable.number("%.0f B per lock (%.1f MiB in all)", bytesPerLock,
                            (heapHolding - heapBefore) / 1048576.0),
                    "", "", "< 2 KiB per lock", bytesPerLock < 2048);
            // A thread per lock would add thousands; the JVM's own pools may add or retire a few meanwhile.
            table.add("6", "10,000 locks held by one registry: threads, leases",
                    ResultTable.number("%+d threads, %d lease(s) on the entries", addedThreads, leases), "", "",
                    "no thread, no lease per lock", addedThreads < LOCKS / 1000 && leases == 1);
        }
    }

    /** Takes this holder's share of the keys, reports, and keeps them until told to release. */
    private static void holdShare(EtcdLockRegistry registry, int holder, CountDownLatch start,
            CountDownLatch holding, CountDownLatch release, AtomicReference<Throwable> failure) {
        List<FencedLock> held = new ArrayList<>(LOCKS / HOLDERS);
        try {
            start.await();
            for (int i = holder; i < LOCKS; i += HOLDERS) {
                FencedLock lock = registry.obtain("held-" + i);
                lock.lock();
                held.add(lock);
            }
            holding.countDown();
            release.await();
        }
        catch (Throwable ex) {
            failure.compareAndSet(null, ex);
            holding.countDown();
        }
        finally {
            held.forEach(FencedLock::unlock);
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        // Several rounds: a full GC can leave objects that only the next one frees (finalizable, soft references).
        for (int i = 0; i < 3; i++) {
            System.gc();
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
