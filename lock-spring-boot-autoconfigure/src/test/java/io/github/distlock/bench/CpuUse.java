package io.github.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time of some processes (all their threads, user and system) and of the whole machine, read
 * from Linux's {@code /proc} at two moments: tells whether a contended scenario was bound by the
 * store or by CPU, which the store's floor (one client, serial) never is.
 */
final class CpuUse {

    /** Linux reports process and machine CPU times in USER_HZ ticks: 100 per second on x86 and ARM. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    private final long storeTicks;

    private final long workerTicks;

    private final long machineBusyTicks;

    private final long machineTotalTicks;

    private CpuUse(long storeTicks, long workerTicks, long machineBusyTicks, long machineTotalTicks) {
        this.storeTicks = storeTicks;
        this.workerTicks = workerTicks;
        this.machineBusyTicks = machineBusyTicks;
        this.machineTotalTicks = machineTotalTicks;
    }

    /**
     * @param store the store server's process
     * @param workers the worker processes
     */
    static CpuUse now(long store, List<Long> workers) throws IOException {
        long workerTicks = 0;
        for (long worker : workers) {
            workerTicks += processTicks(worker);
        }
        // "cpu user nice system idle iowait irq softirq steal ...": idle and iowait are the unused time.
        String[] machine = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        long total = 0;
        for (int i = 1; i < machine.length && i <= 8; i++) {
            total += Long.parseLong(machine[i]);
        }
        long unused = Long.parseLong(machine[4]) + Long.parseLong(machine[5]);
        return new CpuUse(processTicks(store), workerTicks, total - unused, total);
    }

    private static long processTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        // After the command name, which may contain spaces: field 3 (state) onwards; utime and stime are fields 14 and 15.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    /** What was used from {@code start} to this snapshot. */
    Used since(CpuUse start) {
        return new Used((this.storeTicks - start.storeTicks) * NANOS_PER_TICK,
                (this.workerTicks - start.workerTicks) * NANOS_PER_TICK,
                this.machineBusyTicks - start.machineBusyTicks, this.machineTotalTicks - start.machineTotalTicks);
    }

    /** CPU used between two snapshots; adds up over several windows. */
    record Used(long storeNanos, long workerNanos, long machineBusyTicks, long machineTotalTicks) {

        static final Used NONE = new Used(0, 0, 0, 0);

        Used plus(Used other) {
            return new Used(this.storeNanos + other.storeNanos, this.workerNanos + other.workerNanos,
                    this.machineBusyTicks + other.machineBusyTicks, this.machineTotalTicks + other.machineTotalTicks);
        }

        /** @return e.g. "etcd 1.45 ms, workers 3.40 ms per acq.; machine 86% busy" (busy includes steal time) */
        String perAcquisition(long acquisitions, String store) {
            return ResultTable.number("%s %.2f ms, workers %.2f ms per acq.; machine %.0f%% busy", store,
                    this.storeNanos / 1e6 / acquisitions, this.workerNanos / 1e6 / acquisitions,
                    100.0 * this.machineBusyTicks / Math.max(1, this.machineTotalTicks));
        }
    }
}
