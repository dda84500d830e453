package io.github.distlock.nemesis;

import java.util.ArrayList;
import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Test;

/**
 * A minute of nemesis per store with a fixed seed, as the suite runs it (see {@link NemesisRuns}):
 * each seed's first minute injects every kind of fault its store has. One class, so that the runs
 * follow one another in one test JVM; a failure names the seed and the history directory (kept
 * under {@code target/nemesis/}); {@code scripts/nemesis.sh --store <store>} runs longer ones with
 * any seed.
 */
@FaultInjectionTest
class NemesisIntegrationTests {

    private static final List<String> WORKER_FAULTS = List.of(History.label(FaultKind.PAUSE_WORKER),
            History.KILL_WORKER);

    @Test
    void etcdKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.ETCD, 20260437L, with(FaultKind.KILL_MEMBER,
                FaultKind.PAUSE_MEMBER, FaultKind.LOSE_QUORUM, FaultKind.DELETE_ENTRIES), true);
    }

    @Test
    void redisKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.REDIS, 20260427L, with(FaultKind.KILL_MEMBER,
                FaultKind.PAUSE_MEMBER, FaultKind.RESTART_EMPTY, FaultKind.DELETE_ENTRIES), true);
    }

    @Test
    void zookeeperKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.ZOOKEEPER, 20260438L,
                with(FaultKind.KILL_MEMBER, FaultKind.PAUSE_MEMBER, FaultKind.DELETE_ENTRIES), true);
    }

    @Test
    void postgresKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.POSTGRES, 20260443L, with(FaultKind.KILL_MEMBER,
                FaultKind.PAUSE_MEMBER, FaultKind.RESTART_EMPTY, FaultKind.CLOCK_STEP, FaultKind.DELETE_ENTRIES), true);
    }

    @Test
    void mariaDbKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.MARIADB, 20260444L, with(FaultKind.KILL_MEMBER,
                FaultKind.PAUSE_MEMBER, FaultKind.RESTART_EMPTY, FaultKind.CLOCK_STEP, FaultKind.DELETE_ENTRIES), true);
    }

    /** @return the worker faults and {@code storeFaults}, as the run's counts name them */
    private static List<String> with(FaultKind... storeFaults) {
        List<String> kinds = new ArrayList<>(WORKER_FAULTS);
        for (FaultKind kind : storeFaults) {
            kinds.add(History.label(kind));
        }
        return kinds;
    }
}
