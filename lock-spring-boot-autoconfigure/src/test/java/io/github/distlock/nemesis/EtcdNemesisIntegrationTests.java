package io.github.distlock.nemesis;

import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Test;

/**
 * A short nemesis run against a three-member etcd cluster with a fixed seed, as CI runs it (see
 * {@link NemesisRuns}). A failure names the seed and the history directory (kept under
 * {@code target/nemesis/}); {@code scripts/nemesis.sh --store etcd} runs longer ones with any seed.
 */
@FaultInjectionTest
class EtcdNemesisIntegrationTests {

    @Test
    void etcdKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.ETCD, 20260437L,
                List.of(History.label(FaultKind.PAUSE_WORKER), History.KILL_WORKER,
                        History.label(FaultKind.KILL_MEMBER), History.label(FaultKind.PAUSE_MEMBER),
                        History.label(FaultKind.LOSE_QUORUM),
                        History.label(FaultKind.DELETE_ENTRIES)),
                true);
    }
}
