package io.github.distlock.nemesis;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.NemesisRunner.Options;
import io.github.distlock.nemesis.NemesisRunner.Result;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short nemesis run that CI does per store: a minute of four worker JVMs of four threads under
 * faults, with a fixed seed, held to every guarantee; and held to have proved something (every
 * kind of fault the store has was injected, the hot key changed hands often).
 */
final class NemesisRuns {

    /** Locked while a run goes on, by any JVM of the machine. */
    private static final Path ONE_AT_A_TIME = Path.of(System.getProperty("java.io.tmpdir"), "distlock-nemesis.lock");

    private NemesisRuns() {
    }

    /**
     * Runs a minute against {@code store} and asserts that no guarantee broke.
     * @param store the store
     * @param seed the fixed seed
     * @param kinds the fault kinds the run must have injected, {@link History#KILL_WORKER} for kills
     * @param network whether it must have injected a network fault
     */
    static void assertKeepsEveryGuarantee(NemesisStore.Type store, long seed, List<String> kinds, boolean network)
            throws Exception {
        Path historyDir = Path.of("target", "nemesis", store.label() + "-" + seed + "-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Result result;
        // One run at a time on the machine: the test JVMs (forks) would otherwise run two, each with its
        // store servers and four worker JVMs, and a starved run measures the machine, not the library.
        try (FileChannel channel = FileChannel.open(ONE_AT_A_TIME, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock lock = channel.lock()) {
            result = NemesisRunner.run(new Options(store, Duration.ofSeconds(60), seed, 4, 4, Duration.ofSeconds(3),
                    historyDir));
        }
        String table = result.report().table();
        // A run that injected nothing would pass without proving anything.
        for (String kind : kinds) {
            assertThat(result.injected().getOrDefault(kind, 0)).as("%s faults injected%n%s", kind, table)
                .isPositive();
        }
        if (network) {
            assertThat(FaultKind.NETWORK.stream().mapToInt((kind) -> result.injected().getOrDefault(History.label(kind), 0))
                .sum()).as("network faults injected%n%s", table).isPositive();
        }
        assertThat(result.report().history().holds(NemesisRunner.KEYS.get(0))).as("holds of the hot key%n%s", table)
            .hasSizeGreaterThan(100);
        assertThat(result.problems()).as("problems outside the history (seed %d, history in %s)", seed,
                historyDir.toAbsolutePath()).isEmpty();
        assertThat(result.report().violations()).as("violations (seed %d, history in %s)%n%s", seed,
                historyDir.toAbsolutePath(), table).isEmpty();
    }
}
