package io.github.distlock.bench;

import java.util.Arrays;

/** Latencies in nanoseconds, recorded by one thread, summarized by nearest-rank percentiles. */
final class Samples {

    private long[] values = new long[1024];

    private int size;

    void add(long nanos) {
        if (this.size == this.values.length) {
            this.values = Arrays.copyOf(this.values, this.size * 2);
        }
        this.values[this.size++] = nanos;
    }

    void addAll(Samples other) {
        for (int i = 0; i < other.size; i++) {
            add(other.values[i]);
        }
    }

    int count() {
        return this.size;
    }

    long total() {
        long sum = 0;
        for (int i = 0; i < this.size; i++) {
            sum += this.values[i];
        }
        return sum;
    }

    /** @param fraction between 0 and 1, e.g. 0.99 */
    long percentile(double fraction) {
        if (this.size == 0) {
            throw new IllegalStateException("no samples");
        }
        long[] sorted = Arrays.copyOf(this.values, this.size);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(fraction * this.size);
        return sorted[Math.max(0, rank - 1)];
    }

    long median() {
        return percentile(0.5);
    }

    long p99() {
        return percentile(0.99);
    }

    /** Cycles per second if the samples ran back to back, one at a time. */
    double serialRate() {
        return this.size / (total() / 1e9);
    }
}
