package io.github.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What the contention windows of one mode add up to: each process's records ({@code <acquired>
 * <released>} nano times, one acquisition per line), sorted by acquisition time, give the rate,
 * the per-process shares and the handoff gaps (one holder's release to the next holder's return
 * from {@code lock()}); where the records carry when {@code lock()} was called (a third column),
 * also each acquisition's wait in {@code lock()}.
 */
final class Contention {

    private final Samples gaps = new Samples();

    private final Samples waits = new Samples();

    private final long[] perProcess;

    private long acquisitions;

    private long windowNanos;

    private long writes;

    private CpuUse.Used cpu = CpuUse.Used.NONE;

    Contention(int processes) {
        this.perProcess = new long[processes];
    }

    /** @return the acquisitions of this window; {@code revisionDelta} counts the store writes in it, if known */
    long add(List<Path> files, long window, long revisionDelta) throws IOException {
        List<long[]> records = new ArrayList<>();
        for (int process = 0; process < files.size(); process++) {
            List<String> lines = Files.readAllLines(files.get(process));
            for (String line : lines) {
                String[] fields = line.split(" ");
                records.add(new long[] { Long.parseLong(fields[0]), Long.parseLong(fields[1]), process });
                if (fields.length > 2) {
                    this.waits.add(Long.parseLong(fields[0]) - Long.parseLong(fields[2]));
                }
            }
            this.perProcess[process] += lines.size();
        }
        records.sort(Comparator.comparingLong(record -> record[0]));
        for (int i = 1; i < records.size(); i++) {
            long[] previous = records.get(i - 1);
            long[] next = records.get(i);
            // A process that takes the key again right after releasing it hands nothing off.
            if (next[2] != previous[2]) {
                this.gaps.add(next[0] - previous[1]);
            }
        }
        this.acquisitions += records.size();
        this.windowNanos += window;
        this.writes += revisionDelta;
        return records.size();
    }

    /** Adds the CPU that the store and the workers used during one window. */
    void addCpu(CpuUse.Used used) {
        this.cpu = this.cpu.plus(used);
    }

    /** @return e.g. "etcd 1.45 ms, workers 3.40 ms per acq.; machine 86% busy" */
    String cpuPerAcquisition(String store) {
        return this.cpu.perAcquisition(this.acquisitions, store);
    }

    Samples gaps() {
        return this.gaps;
    }

    /** @return how long {@code lock()} took, per acquisition (empty unless the records carry it) */
    Samples waits() {
        return this.waits;
    }

    double rate() {
        return this.acquisitions / (this.windowNanos / 1e9);
    }

    /** @return handoffs per second: acquisitions by another process than the one before */
    double handoffRate() {
        return this.gaps.count() / (this.windowNanos / 1e9);
    }

    double writesPerAcquisition() {
        return (double) this.writes / this.acquisitions;
    }

    double leastShare() {
        long least = Long.MAX_VALUE;
        for (long count : this.perProcess) {
            least = Math.min(least, count);
        }
        return (double) least / this.acquisitions;
    }

    String shares() {
        List<String> shares = new ArrayList<>();
        for (long count : this.perProcess) {
            shares.add(ResultTable.number("%.0f%%", 100.0 * count / this.acquisitions));
        }
        return String.join("/", shares);
    }
}
