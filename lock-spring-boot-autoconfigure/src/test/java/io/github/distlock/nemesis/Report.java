package io.github.distlock.nemesis;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.github.distlock.nemesis.History.Operation;
import io.github.distlock.nemesis.History.Window;
import io.github.distlock.nemesis.HistoryEvent.LossReport;
import io.github.distlock.nemesis.HistoryEvent.RunStart;
import io.github.distlock.nemesis.Violation.Kind;

/**
 * The outcome of one checked run: one plain-text table (faults by kind, holds, writes, rejected
 * writes, losses reported, violations by kind, longest unavailability after a heal, seed) followed
 * by the violations themselves, and the process exit status: 0 if there is none, 1 otherwise.
 *
 * @param history the checked history
 * @param violations what the {@link Checker} found, by time
 */
public record Report(History history, List<Violation> violations) {

    /** At most this many violations are listed under the table; the table counts them all. */
    static final int LISTED_VIOLATIONS = 50;

    /** @return the report of {@code history} checked by {@code checker} */
    public static Report of(History history, Checker checker) {
        return new Report(history, checker.check(history));
    }

    /** @return 0 if the run broke no rule, 1 if it broke any */
    public int exitStatus() {
        return this.violations.isEmpty() ? 0 : 1;
    }

    /** @return the table, then the first {@value #LISTED_VIOLATIONS} violations, one a line */
    public String table() {
        StringBuilder table = new StringBuilder();
        Optional<RunStart> run = this.history.run();
        row(table, "seed", run.map((r) -> String.valueOf(r.seed())).orElse("unknown"));
        row(table, "store", run.map(RunStart::store).orElse("unknown"));
        row(table, "started", run.map((r) -> Instant.ofEpochMilli(r.epochMillis()).toString()).orElse("unknown")
                + ", ran " + this.history.time(this.history.end()));
        row(table, "faults", this.history.faults().size());
        this.history.faults().stream()
            .collect(Collectors.groupingBy(Window::kind, TreeMap::new, Collectors.counting()))
            .forEach((kind, count) -> row(table, "  " + kind, count));
        row(table, "holds", this.history.operations().stream().filter((op) -> op.grant() != null && !op.reentrant())
            .count());
        row(table, "register writes", this.history.writes().size());
        row(table, "rejected writes", this.history.writes().stream().filter((write) -> !write.accepted()).count());
        row(table, "losses reported", this.history.losses().size() + " reports, "
                + this.history.losses().stream().mapToLong(LossReport::count).sum() + " holds");
        row(table, "longest unavailability", longestUnavailability()
            .map((u) -> String.format(Locale.ROOT, "%s%.3fs for '%s' after %s healed at %s",
                    u.ongoing() ? "over " : "", u.nanos() / 1e9, u.key(), u.fault().id(),
                    this.history.time(u.fault().heal())))
            .orElse("none measured"));
        row(table, "torn last lines", this.history.tornLines());
        row(table, "violations", this.violations.size());
        for (Kind kind : Kind.values()) {
            row(table, "  " + kind.label(), this.violations.stream().filter((v) -> v.kind() == kind).count());
        }
        row(table, "result", this.violations.isEmpty() ? "PASS" : "FAIL");
        this.violations.stream().limit(LISTED_VIOLATIONS)
            .forEach((v) -> table.append(this.history.time(v.at())).append(' ').append(v).append('\n'));
        if (this.violations.size() > LISTED_VIOLATIONS) {
            table.append("... and ").append(this.violations.size() - LISTED_VIOLATIONS).append(" more\n");
        }
        return table.toString();
    }

    private static void row(StringBuilder table, String label, Object value) {
        table.append(String.format(Locale.ROOT, "%-26s %s%n", label, value));
    }

    /**
     * The longest time a key waited for its next grant after a fault healed while no other fault
     * was in effect (the moment the store should serve again), over every key and such heal; kills
     * count as faults that heal at once, so this includes waiting out a dead holder's lease. A key
     * never granted again counts until the history's end, as ongoing.
     */
    public Optional<Unavailability> longestUnavailability() {
        Unavailability longest = null;
        for (Window fault : this.history.faults()) {
            long healed = fault.heal();
            boolean allClear = healed != History.NEVER && this.history.faults().stream()
                .noneMatch((other) -> other.start() <= healed && other.heal() > healed);
            if (!allClear) {
                continue;
            }
            for (String key : this.history.keys()) {
                Optional<Operation> next = this.history.holds(key).stream()
                    .filter((op) -> op.grant().at() > healed).findFirst();
                long until = next.map((op) -> op.grant().at()).orElse(this.history.end());
                if (longest == null || until - healed > longest.nanos()) {
                    longest = new Unavailability(key, fault, until - healed, next.isEmpty());
                }
            }
        }
        return Optional.ofNullable(longest);
    }

    /**
     * How long a key went without a grant after a heal.
     * @param fault the healed fault
     * @param nanos from its heal to the key's next grant, or to the history's end
     * @param ongoing whether the key was not granted again by the end
     */
    public record Unavailability(String key, Window fault, long nanos, boolean ongoing) {
    }
}
