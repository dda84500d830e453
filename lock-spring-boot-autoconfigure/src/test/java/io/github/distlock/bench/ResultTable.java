package io.github.distlock.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The one table a benchmark run prints: each row a measurement, its reference, and the verdict on its target. */
final class ResultTable {

    private static final String[] HEADERS = { "#", "scenario", "measured", "floor / reference", "ratio", "target",
            "result" };

    private final List<String[]> rows = new ArrayList<>();

    /** A row checked against a target. */
    void add(String scenario, String what, String measured, String reference, String ratio, String target,
            boolean met) {
        this.rows.add(new String[] { scenario, what, measured, reference, ratio, target, met ? "PASS" : "MISS" });
    }

    /** A row for context only (a reference measurement, or a number the targets do not cover). */
    void info(String scenario, String what, String measured, String reference, String ratio) {
        this.rows.add(new String[] { scenario, what, measured, reference, ratio, "", "" });
    }

    void print(PrintStream out) {
        int[] widths = new int[HEADERS.length];
        for (int i = 0; i < HEADERS.length; i++) {
            widths[i] = HEADERS[i].length();
            for (String[] row : this.rows) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        out.println(line(HEADERS, widths));
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < widths.length; i++) {
            rule.append(i == 0 ? "" : "-+-").append("-".repeat(widths[i]));
        }
        out.println(rule);
        for (String[] row : this.rows) {
            out.println(line(row, widths));
        }
    }

    private static String line(String[] cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            line.append(i == 0 ? "" : " | ").append(String.format("%-" + widths[i] + "s", cells[i]));
        }
        return line.toString().stripTrailing();
    }

    static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    /** Median and p99 of a latency distribution, in milliseconds. */
    static String latency(Samples samples) {
        return "median " + millis(samples.median()) + ", p99 " + millis(samples.p99());
    }

    static String rate(double perSecond) {
        return String.format(Locale.ROOT, "%.0f/s", perSecond);
    }

    static String ratio(double ratio) {
        return String.format(Locale.ROOT, "%.2fx", ratio);
    }

    static String number(String pattern, Object... values) {
        return String.format(Locale.ROOT, pattern, values);
    }
}
