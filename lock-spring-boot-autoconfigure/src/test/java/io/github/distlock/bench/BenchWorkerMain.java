package io.github.distlock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Lock;
import io.etcd.jetcd.lock.LockResponse;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.etcd.EtcdLockRegistry;

/**
 * A contender in its own JVM, for the benchmarks that need several processes: one jetcd client and
 * one registry, driven over stdin.
 *
 * <p>Arguments: {@code <endpoints,comma-separated> <namespace> <lease ttl seconds> <name>}.
 * Commands, one per line:
 * <ul>
 * <li>{@code LOOP <run> <fair|unfair|jetcd> <key> <window start> <window end> <stop at> <file>}:
 * acquire and release {@code key} back to back with an empty critical section until {@code stop at}
 * ({@code jetcd} uses etcd's own lock service instead of the registry), write
 * {@code <acquired> <released>} for every acquisition that returned inside the window to
 * {@code file}, then print {@code DONE <run> <count>};</li>
 * <li>{@code THREADS <run> <fair|unfair|unfair-direct> <key> <threads> <window start> <window end> <stop at> <file>}:
 * the same with {@code threads} threads of this process looping on the key, each record with when
 * its {@code lock()} was called ({@code unfair-direct}: on a registry without local handoffs);</li>
 * <li>{@code HOLD <key>}: take the fair lock, keep it, and print {@code HOLDING <fence>}.</li>
 * </ul>
 * All times are {@link System#nanoTime()} values: on Linux that clock is the machine's monotonic
 * clock, the same in every JVM, so the parent can line up the records of all contenders. The JVM
 * exits when its stdin ends.
 */
public final class BenchWorkerMain {

    /** Outlives any loop, so that the jetcd lock service runs without keep-alives in the way. */
    private static final long JETCD_LOCK_LEASE_SECONDS = 120;

    private BenchWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        List<String> endpoints = Arrays.asList(args[0].split(","));
        Client client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
        EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
            .namespace(args[1])
            .leaseTtl(Duration.ofSeconds(Long.parseLong(args[2])))
            .ownerIdentity(args[3])
            .endpoints(endpoints)
            .build();
        // The reference for local handoffs: every acquisition goes to etcd.
        EtcdLockRegistry direct = EtcdLockRegistry.builder(client)
            .namespace(args[1])
            .leaseTtl(Duration.ofSeconds(Long.parseLong(args[2])))
            .ownerIdentity(args[3] + "-direct")
            .localHandoff(LocalHandoff.DISABLED)
            .endpoints(endpoints)
            .build();
        System.out.println("READY " + args[3]);
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String command;
        while ((command = commands.readLine()) != null) {
            String[] words = command.trim().split(" ");
            switch (words[0]) {
                case "LOOP" -> {
                    Records records = new Records(Long.parseLong(words[4]), Long.parseLong(words[5]));
                    long stopAt = Long.parseLong(words[6]);
                    if (words[2].equals("jetcd")) {
                        loopOnLockService(client, words[3], stopAt, records);
                    }
                    else {
                        records.loop(registry.obtain(words[3], words[2].equals("fair")), stopAt);
                    }
                    records.writeTo(Path.of(words[7]));
                    System.out.println("DONE " + words[1] + " " + records.count);
                }
                case "THREADS" -> {
                    EtcdLockRegistry looping = words[2].endsWith("-direct") ? direct : registry;
                    int count = loopOnThreads(looping.obtain(words[3], words[2].startsWith("fair")),
                            Integer.parseInt(words[4]), Long.parseLong(words[5]), Long.parseLong(words[6]),
                            Long.parseLong(words[7]), Path.of(words[8]));
                    System.out.println("DONE " + words[1] + " " + count);
                }
                case "HOLD" -> {
                    FencedLock lock = registry.obtain(words[1], true);
                    lock.lock();
                    System.out.println("HOLDING " + lock.getFence());
                }
                default -> throw new IllegalArgumentException("unknown command: " + command);
            }
        }
        registry.close();
        direct.close();
        client.close();
    }

    /** @return the acquisitions recorded by all threads */
    private static int loopOnThreads(FencedLock lock, int threads, long windowStart, long windowEnd, long stopAt,
            Path file) throws Exception {
        List<Records> records = new ArrayList<>();
        List<Thread> loops = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Records own = new Records(windowStart, windowEnd);
            records.add(own);
            Thread loop = new Thread(() -> own.loop(lock, stopAt), "loop-" + i);
            loop.start();
            loops.add(loop);
        }
        for (Thread loop : loops) {
            loop.join();
        }
        Records.writeAll(records, file);
        return records.stream().mapToInt(own -> own.count).sum();
    }

    private static void loopOnLockService(Client client, String key, long stopAt, Records records)
            throws Exception {
        Lock lockService = client.getLockClient();
        long lease = client.getLeaseClient().grant(JETCD_LOCK_LEASE_SECONDS).get().getID();
        ByteSequence name = ByteSequence.from("/bench/jetcd-lock/" + key, StandardCharsets.UTF_8);
        while (System.nanoTime() < stopAt) {
            LockResponse held = lockService.lock(name, lease).get();
            long acquired = System.nanoTime();
            long released = System.nanoTime();
            lockService.unlock(held.getKey()).get();
            records.add(acquired, released);
        }
        client.getLeaseClient().revoke(lease).get();
    }
}
