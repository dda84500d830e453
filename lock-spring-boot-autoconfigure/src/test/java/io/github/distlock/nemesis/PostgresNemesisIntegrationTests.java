package io.github.distlock.nemesis;

import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Test;

/**
 * A short nemesis run against a single PostgreSQL server with a fixed seed, as CI runs it (see
 * {@link NemesisRuns} and {@link JdbcNemesisStore}). A failure names the seed and the history
 * directory (kept under {@code target/nemesis/}); {@code scripts/nemesis.sh --store postgres} runs
 * longer ones with any seed.
 */
@FaultInjectionTest
class PostgresNemesisIntegrationTests {

    @Test
    void postgresKeepsEveryGuaranteeUnderFaults() throws Exception {
        NemesisRuns.assertKeepsEveryGuarantee(NemesisStore.Type.POSTGRES, 20260443L,
                List.of(History.label(FaultKind.PAUSE_WORKER), History.KILL_WORKER,
                        History.label(FaultKind.KILL_MEMBER), History.label(FaultKind.PAUSE_MEMBER),
                        History.label(FaultKind.RESTART_EMPTY), History.label(FaultKind.DELETE_ENTRIES)),
                true);
    }
}
