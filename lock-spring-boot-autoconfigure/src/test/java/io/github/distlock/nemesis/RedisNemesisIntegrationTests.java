package io.github.distlock.nemesis;

import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Test;

/**
 * A short nemesis run against a Redis primary and replica watched by Sentinel, with a fixed seed,
 * as CI runs it (see {@link NemesisRuns}). The seed's plan kills the primary four times (failovers),
 * pauses it past the Sentinel's down-after, restarts it empty and deletes entries. The workers
 * connect through the Sentinel, so the run has no network faults. A failure names the seed and the
 * history directory (kept under {@code target/nemesis/}); {@code scripts/nemesis.sh --store redis}
 * runs longer ones with any seed.
 */
@FaultInjectionTest
class RedisNemesisIntegrationTests {

    @Test
    void redisKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.REDIS, 20260427L,
                List.of(History.label(FaultKind.PAUSE_WORKER), History.KILL_WORKER,
                        History.label(FaultKind.KILL_MEMBER), History.label(FaultKind.PAUSE_MEMBER),
                        History.label(FaultKind.RESTART_EMPTY), History.label(FaultKind.DELETE_ENTRIES)),
                false);
    }
}
