package io.github.distlock.bench;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.Lock;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.core.Fences;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.GrpcCallCounter;

/**
 * Scenario 9: one thread re-acquires an unfair lock that no other process wants, with a linger
 * and without. With a linger the entry stays in etcd between holds, so a re-acquisition should
 * cost no etcd call at all: counted with a gRPC interceptor on the registry's own client (every
 * call started, unary or stream), and the revision shows that nothing was written.
 */
final class LingerScenario {

    static final int WARMUP_CYCLES = 2_000;

    static final int CYCLES = 20_000;

    /** The target of the calls row, as {@link #callBound()} checks it. */
    static final String CALL_TARGET = "<= 2 per " + (Fences.MAX_PASS + 1) + " cycles";

    private static final int DIRECT_CYCLES = 1_000;

    private static final ByteSequence REVISION_PROBE = ByteSequence.from("/bench/revision-probe",
            StandardCharsets.UTF_8);

    private LingerScenario() {
    }

    static void run(EtcdCluster etcd, Client probe, UncontendedScenario.Floor floor, ResultTable table)
            throws Exception {
        GrpcCallCounter calls = new GrpcCallCounter();
        Samples lingering = new Samples();
        Samples direct = new Samples();
        long lingerCalls;
        long lingerKeepAlives;
        long lingerWrites;
        try (Client client = Client.builder().endpoints(etcd.clientEndpoints().toArray(String[]::new))
            .interceptor(calls).build();
                EtcdLockRegistry withLinger = registry(client, "/bench/s9-linger/",
                        new LocalHandoff(LocalHandoff.DEFAULT.window(), Duration.ofMillis(100)));
                EtcdLockRegistry without = registry(client, "/bench/s9-direct/", LocalHandoff.DEFAULT)) {
            FencedLock lingeringLock = withLinger.obtain("again");
            FencedLock directLock = without.obtain("again");
            for (int i = 0; i < WARMUP_CYCLES; i++) {
                cycle(lingeringLock, null);
                if (i < DIRECT_CYCLES) {
                    cycle(directLock, null);
                }
            }
            long revisionBefore = revision(probe);
            long callsBefore = calls.calls();
            long keepAlivesBefore = calls.keepAlives();
            for (int i = 0; i < CYCLES; i++) {
                cycle(lingeringLock, lingering);
            }
            lingerCalls = calls.calls() - callsBefore;
            lingerKeepAlives = calls.keepAlives() - keepAlivesBefore;
            lingerWrites = revision(probe) - revisionBefore;
            for (int i = 0; i < DIRECT_CYCLES; i++) {
                cycle(directLock, direct);
            }
        }
        addTimes(table, "9", lingering, "without linger " + ResultTable.latency(direct) + "; floor "
                + ResultTable.latency(floor.cycles()), floor.cycles());
        // The session's keep-alives come on their own timer, whatever the cycles do: shown, not counted.
        table.add("9", "re-acquire with linger: etcd calls / writes in " + CYCLES + " cycles",
                lingerCalls + " / " + lingerWrites + " (and " + lingerKeepAlives + " keep-alives)", storeAcquisitions(),
                ResultTable.number("%.4f calls per cycle", (double) lingerCalls / CYCLES), CALL_TARGET,
                lingerCalls <= callBound() && lingerWrites <= callBound());
    }

    /** Adds the row of the re-acquisitions' times against the store's floor: median under 20 us. */
    static void addTimes(ResultTable table, String scenario, Samples lingering, String reference, Samples floor) {
        table.add(scenario, "re-acquire, same process, linger 100 ms: lock()+unlock()",
                ResultTable.number("median %.1f us, p99 %.1f us", lingering.median() / 1e3, lingering.p99() / 1e3),
                reference, ResultTable.ratio((double) lingering.median() / floor.median()), "median < 20 us",
                lingering.median() < 20_000);
    }

    /** @return the reference column of the calls row: how many store acquisitions {@link #CYCLES} need */
    static String storeAcquisitions() {
        return ResultTable.number("%d store acquisitions (1 per %d holds)", CYCLES / (Fences.MAX_PASS + 1),
                Fences.MAX_PASS + 1);
    }

    /**
     * @return the most store calls (or writes) {@link #CYCLES} re-acquisitions may cost: a release
     * and a write per store acquisition, which comes once per 1 + Fences.MAX_PASS holds (the fence
     * encoding's price), and one more
     */
    static long callBound() {
        return 2L * (CYCLES / (Fences.MAX_PASS + 1) + 1);
    }

    private static EtcdLockRegistry registry(Client client, String namespace, LocalHandoff localHandoff) {
        return EtcdLockRegistry.builder(client)
            .namespace(namespace)
            .ownerIdentity("bench-s9")
            .localHandoff(localHandoff)
            .endpoints(List.of("bench"))
            .build();
    }

    /** One lock()+unlock(), timed into {@code into} unless it is {@code null}. */
    static void cycle(Lock lock, Samples into) {
        long start = System.nanoTime();
        lock.lock();
        lock.unlock();
        if (into != null) {
            into.add(System.nanoTime() - start);
        }
    }

    private static long revision(Client client) throws Exception {
        return client.getKVClient().get(REVISION_PROBE).get().getHeader().getRevision();
    }
}
