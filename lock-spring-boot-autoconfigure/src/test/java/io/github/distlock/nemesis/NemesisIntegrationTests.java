package io.github.distlock.nemesis;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.NemesisRunner.Options;
import io.github.distlock.nemesis.NemesisRunner.Result;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A short nemesis run per store with a fixed seed, as CI runs it: about a minute of four worker
 * JVMs under every kind of fault, checked against the guarantees. A failure names the seed and
 * the history directory (kept under {@code target/nemesis/}); {@code scripts/nemesis.sh} runs
 * longer ones with any seed.
 */
@FaultInjectionTest
@Disabled("Out of the suite until the worker records a release before its outcome: in a CI run (seed 20260437, "
        + "two test JVMs) a worker SIGKILLed after etcd applied its unlock but before it recorded the release read "
        + "as an overlap with the next holder; scripts/nemesis.sh runs it")
class NemesisIntegrationTests {

    private static final long ETCD_SEED = 20260437L;

    @Test
    void etcdKeepsEveryGuaranteeUnderFaults() throws Exception {
        Path historyDir = Path.of("target", "nemesis", "etcd-" + ETCD_SEED + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Result result = NemesisRunner.run(new Options("etcd", Duration.ofSeconds(60), ETCD_SEED, 4, 4,
                Duration.ofSeconds(3), historyDir));
        String table = result.report().table();
        // A run that injected nothing would pass without proving anything.
        for (String kind : new String[] { History.label(FaultKind.PAUSE_WORKER), History.KILL_WORKER,
                History.label(FaultKind.KILL_MEMBER), History.label(FaultKind.PAUSE_MEMBER),
                History.label(FaultKind.DELETE_ENTRIES) }) {
            assertThat(result.injected().getOrDefault(kind, 0)).as("%s faults injected%n%s", kind, table)
                .isPositive();
        }
        assertThat(result.report().history().holds("hot")).as("holds of the hot key%n%s", table).hasSizeGreaterThan(100);
        assertThat(result.problems()).as("problems outside the history (seed %d, history in %s)", ETCD_SEED,
                historyDir).isEmpty();
        assertThat(result.report().violations()).as("violations (seed %d, history in %s)%n%s", ETCD_SEED,
                historyDir.toAbsolutePath(), table).isEmpty();
    }
}
