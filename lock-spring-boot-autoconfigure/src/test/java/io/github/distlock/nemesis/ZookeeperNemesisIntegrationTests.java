package io.github.distlock.nemesis;

import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Test;

/**
 * A short nemesis run against a three-member ZooKeeper ensemble with a fixed seed, as CI runs it
 * (see {@link NemesisRuns}). The seed's plan has every fault kind in its first seconds, leader
 * kills and pauses, all three scopes of deletes and two network faults. A failure names the seed
 * and the history directory (kept under {@code target/nemesis/}); {@code scripts/nemesis.sh
 * --store zookeeper} runs longer ones with any seed.
 */
@FaultInjectionTest
class ZookeeperNemesisIntegrationTests {

    @Test
    void zookeeperKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.ZOOKEEPER, 20260438L,
                List.of(History.label(FaultKind.PAUSE_WORKER), History.KILL_WORKER,
                        History.label(FaultKind.KILL_MEMBER), History.label(FaultKind.PAUSE_MEMBER),
                        History.label(FaultKind.DELETE_ENTRIES)),
                true);
    }
}
