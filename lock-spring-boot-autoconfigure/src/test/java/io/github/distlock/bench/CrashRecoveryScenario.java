package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.JvmProcess;

/**
 * Scenario 7: a holder in another JVM is killed with SIGKILL while this JVM waits for its lock;
 * measured from the kill to the waiter's return from {@code lock()}. Nothing tells etcd about the
 * crash: the lock is freed when the holder's session lease expires, at most one TTL after its last
 * keep-alive, so the expected time is between two thirds of a TTL and a TTL (keep-alives go out
 * every third of it), plus etcd's expiry check and the handoff.
 */
final class CrashRecoveryScenario {

    private static final Duration LEASE_TTL = Duration.ofSeconds(3);

    private static final int TRIALS = 3;

    private static final Duration STEP_TIMEOUT = Duration.ofSeconds(30);

    private static final String NAMESPACE = "/bench/s7/";

    private CrashRecoveryScenario() {
    }

    static void run(EtcdCluster etcd, Client client, ResultTable table) throws Exception {
        Samples recoveries = new Samples();
        try (EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace(NAMESPACE)
            .leaseTtl(LEASE_TTL)
            .ownerIdentity("bench-s7")
            .build()) {
            for (int trial = 0; trial < TRIALS; trial++) {
                System.out.println("[bench] scenario 7: crash recovery, trial " + (trial + 1) + " of " + TRIALS);
                recoveries.add(trial(etcd, client, registry.obtain("crash-" + trial, true)));
            }
        }
        long max = recoveries.percentile(1.0);
        long bound = LEASE_TTL.plusSeconds(1).toNanos();
        table.add("7", "crash recovery: SIGKILL of holder -> next holder enters",
                ResultTable.number("median %.2f s, max %.2f s (%d trials)", recoveries.median() / 1e9, max / 1e9,
                        TRIALS),
                "lease TTL " + LEASE_TTL.toSeconds() + " s", ResultTable.ratio((double) max / LEASE_TTL.toNanos()),
                "max <= TTL + 1 s", max <= bound);
    }

    /** @return nanoseconds from the holder's kill to the waiter's acquisition */
    private static long trial(EtcdCluster etcd, Client client, FencedLock lock) throws Exception {
        try (JvmProcess holder = JvmProcess.builder(BenchWorkerMain.class)
            .args(String.join(",", etcd.clientEndpoints()), NAMESPACE, Long.toString(LEASE_TTL.toSeconds()),
                    "holder")
            .start()) {
            holder.awaitLine(line -> line.startsWith("READY"), STEP_TIMEOUT);
            holder.sendLine("HOLD " + lock.getKey());
            holder.awaitLine(line -> line.startsWith("HOLDING"), STEP_TIMEOUT);
            CompletableFuture<Long> acquired = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    lock.lock();
                }
                catch (RuntimeException ex) {
                    acquired.completeExceptionally(ex);
                    return;
                }
                acquired.complete(System.nanoTime());
                lock.unlock();
            }, "bench-s7-waiter");
            waiter.start();
            awaitQueued(client);
            long killed = System.nanoTime();
            holder.kill();
            long recovery = acquired.get(LEASE_TTL.plus(STEP_TIMEOUT).toSeconds(), TimeUnit.SECONDS) - killed;
            waiter.join();
            return recovery;
        }
    }

    /** Waits until the waiter's entry is in etcd behind the holder's, so the kill hits a real wait. */
    private static void awaitQueued(Client client) throws Exception {
        ByteSequence namespace = ByteSequence.from(NAMESPACE, StandardCharsets.UTF_8);
        GetOption count = GetOption.builder().isPrefix(true).withCountOnly(true).build();
        long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
        while (client.getKVClient().get(namespace, count).get().getCount() < 2) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("scenario 7: the waiter did not queue behind the holder");
            }
            TimeUnit.MILLISECONDS.sleep(10);
        }
    }
}
