package io.github.distlock.sample.demo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What one demo run showed, computed from the workers' output alone: the order in which workers
 * started waiting (arrival), the order in which they got the lock (acquisition), which workers
 * were served ahead of workers that had arrived before them (and whether of the same process),
 * the longest wait, the gaps between one worker's release and the next one's acquisition, and
 * whether the lock was ever held by two workers at once.
 */
public final class DemoSummary {

    private static final long DAY_MILLIS = 24 * 60 * 60 * 1000L;

    private final List<Integer> arrivalOrder;

    private final List<Integer> acquisitionOrder;

    private final List<Overtake> overtakes;

    private final int workers;

    private final int incomplete;

    private final long longestWaitMillis;

    private final int longestWaiter;

    private final List<Long> handoffGapsMillis;

    private final boolean exclusive;

    private final boolean fencesIncrease;

    private DemoSummary(List<Integer> arrivalOrder, List<Integer> acquisitionOrder, List<Overtake> overtakes,
            int workers, int incomplete,
            long longestWaitMillis, int longestWaiter, List<Long> handoffGapsMillis, boolean exclusive,
            boolean fencesIncrease) {
        this.arrivalOrder = arrivalOrder;
        this.acquisitionOrder = acquisitionOrder;
        this.overtakes = overtakes;
        this.workers = workers;
        this.incomplete = incomplete;
        this.longestWaitMillis = longestWaitMillis;
        this.longestWaiter = longestWaiter;
        this.handoffGapsMillis = handoffGapsMillis;
        this.exclusive = exclusive;
        this.fencesIncrease = fencesIncrease;
    }

    /**
     * Summarises the events of one run.
     * @param events every event of the run, from all processes, in any order
     * @return the summary
     */
    public static DemoSummary of(List<DemoEvent> events) {
        Map<Integer, WorkerTimes> times = new HashMap<>();
        long[] millis = events.stream().mapToLong(event -> event.time().toNanoOfDay() / 1_000_000).toArray();
        boolean acrossMidnight = events.size() > 1
                && Arrays.stream(millis).max().getAsLong() - Arrays.stream(millis).min().getAsLong()
                        > DAY_MILLIS / 2;
        for (int i = 0; i < events.size(); i++) {
            DemoEvent event = events.get(i);
            long at = (acrossMidnight && millis[i] < DAY_MILLIS / 2) ? millis[i] + DAY_MILLIS : millis[i];
            WorkerTimes worker = times.computeIfAbsent(event.worker(), WorkerTimes::new);
            switch (event.kind()) {
                case WAITING -> {
                    worker.waiting = at;
                    worker.process = event.process();
                }
                case ACQUIRED -> {
                    worker.acquired = at;
                    worker.fence = event.fence();
                }
                case RELEASED -> worker.released = at;
            }
        }
        List<WorkerTimes> complete = times.values().stream().filter(WorkerTimes::isComplete).toList();
        List<WorkerTimes> byArrival = complete.stream()
            .sorted(Comparator.comparingLong((WorkerTimes worker) -> worker.waiting).thenComparingInt(w -> w.id))
            .toList();
        List<Integer> arrival = byArrival.stream().map(worker -> worker.id).toList();
        List<WorkerTimes> byAcquisition = complete.stream()
            .sorted(Comparator.comparingLong((WorkerTimes worker) -> worker.acquired).thenComparingInt(w -> w.id))
            .toList();
        long longestWait = -1;
        int longestWaiter = 0;
        for (WorkerTimes worker : complete) {
            if (worker.acquired - worker.waiting > longestWait) {
                longestWait = worker.acquired - worker.waiting;
                longestWaiter = worker.id;
            }
        }
        List<Overtake> overtakes = new ArrayList<>();
        for (WorkerTimes worker : byAcquisition) {
            for (WorkerTimes earlier : byArrival) {
                if (earlier.waiting < worker.waiting && earlier.acquired > worker.acquired) {
                    overtakes.add(new Overtake(worker.id, worker.process, earlier.id, earlier.process));
                }
            }
        }
        List<Long> gaps = new ArrayList<>();
        boolean exclusive = true;
        boolean fencesIncrease = true;
        for (int i = 1; i < byAcquisition.size(); i++) {
            WorkerTimes previous = byAcquisition.get(i - 1);
            WorkerTimes next = byAcquisition.get(i);
            long gap = next.acquired - previous.released;
            gaps.add(gap);
            exclusive &= gap >= 0;
            fencesIncrease &= next.fence > previous.fence;
        }
        return new DemoSummary(arrival, byAcquisition.stream().map(worker -> worker.id).toList(),
                List.copyOf(overtakes), times.size(),
                times.size() - complete.size(), Math.max(0, longestWait), longestWaiter, gaps, exclusive,
                fencesIncrease);
    }

    /** @return worker numbers in the order they started waiting */
    public List<Integer> arrivalOrder() {
        return this.arrivalOrder;
    }

    /** @return worker numbers in the order they acquired the lock */
    public List<Integer> acquisitionOrder() {
        return this.acquisitionOrder;
    }

    /** @return whether no worker got the lock before one that had started waiting before it */
    public boolean arrivalOrderKept() {
        return this.overtakes.isEmpty();
    }

    /**
     * @return each case of a worker that got the lock before a worker that had started waiting
     * before it, in acquisition order of the worker that got ahead, then arrival order of the one
     * it got ahead of
     */
    public List<Overtake> overtakes() {
        return this.overtakes;
    }

    /** @return how many workers were served out of arrival order: ahead of one that arrived earlier */
    public int servedOutOfOrder() {
        return (int) this.overtakes.stream().mapToInt(Overtake::worker).distinct().count();
    }

    /** @return whether every worker that appeared waited, acquired and released */
    public boolean isComplete() {
        return this.incomplete == 0 && this.workers > 0;
    }

    /** @return the longest time a worker waited for the lock */
    public long longestWaitMillis() {
        return this.longestWaitMillis;
    }

    /** @return the worker that waited longest */
    public int longestWaiter() {
        return this.longestWaiter;
    }

    /** @return for each handoff, the time from one worker's release to the next worker's acquisition */
    public List<Long> handoffGapsMillis() {
        return this.handoffGapsMillis;
    }

    /** @return whether no worker acquired the lock before the previous holder released it */
    public boolean isExclusive() {
        return this.exclusive;
    }

    /** @return whether each acquisition's fence is greater than the previous one's */
    public boolean fencesIncrease() {
        return this.fencesIncrease;
    }

    /**
     * @param fair whether the run used fair locks, which decides what the order means
     * @return the summary as indented lines
     */
    public String describe(boolean fair) {
        String order;
        if (this.overtakes.isEmpty()) {
            order = fair ? "yes, as fair=true promises" : "yes, this time (fair=false does not promise it)";
        }
        else {
            order = "no, " + servedOutOfOrder() + " of " + this.arrivalOrder.size()
                    + " workers were served out of arrival order" + (fair ? " - fair=true promised it!"
                            : " (fair=false does not promise arrival order)");
        }
        List<String> lines = new ArrayList<>();
        lines.add("arrival order     : " + join(this.arrivalOrder));
        lines.add("acquisition order : " + join(this.acquisitionOrder));
        lines.add("order kept        : " + order);
        Map<Integer, List<Overtake>> byWorker = this.overtakes.stream()
            .collect(Collectors.groupingBy(Overtake::worker, LinkedHashMap::new, Collectors.toList()));
        String label = "served ahead      : ";
        for (List<Overtake> ahead : byWorker.values()) {
            Overtake first = ahead.get(0);
            lines.add(label + "worker " + first.worker() + " (p" + first.process() + ") ahead of "
                    + ahead.stream().map(Overtake::describeOvertaken).collect(Collectors.joining(", ")));
            label = " ".repeat(label.length());
        }
        lines.add("longest wait      : " + this.longestWaitMillis + " ms (worker " + this.longestWaiter + ")");
        if (!this.handoffGapsMillis.isEmpty()) {
            long max = this.handoffGapsMillis.stream().mapToLong(Long::longValue).max().getAsLong();
            double average = this.handoffGapsMillis.stream().mapToLong(Long::longValue).average().getAsDouble();
            lines.add(String.format(Locale.ROOT,
                    "handoff gap       : avg %.1f ms, max %d ms (one worker's release to the next one's acquisition)",
                    average, max));
        }
        lines.add("mutual exclusion  : " + ((this.exclusive && this.fencesIncrease)
                ? "kept (never two holders at once, every fence greater than the last)"
                : "VIOLATED" + (this.exclusive ? "" : " (two holders at once)")
                        + (this.fencesIncrease ? "" : " (fences not increasing)")));
        if (!isComplete()) {
            lines.add("incomplete        : " + this.incomplete + " of " + this.workers + " workers did not finish");
        }
        return lines.stream().map(line -> "  " + line).collect(Collectors.joining(System.lineSeparator()));
    }

    private static String join(List<Integer> workers) {
        return workers.stream().map(String::valueOf).collect(Collectors.joining(" "));
    }

    /**
     * A worker that got the lock before another one that had started waiting before it.
     * @param worker the worker that got ahead
     * @param process its process
     * @param overtaken the worker that had arrived earlier and got the lock later
     * @param overtakenProcess that worker's process
     */
    public record Overtake(int worker, int process, int overtaken, int overtakenProcess) {

        /** @return whether both workers are threads of one process */
        public boolean sameProcess() {
            return this.process == this.overtakenProcess;
        }

        String describeOvertaken() {
            return "worker " + this.overtaken + " (p" + this.overtakenProcess + (sameProcess() ? ", same process)" : ")");
        }
    }

    private static final class WorkerTimes {

        final int id;

        int process;

        long waiting = -1;

        long acquired = -1;

        long released = -1;

        long fence;

        WorkerTimes(int id) {
            this.id = id;
        }

        boolean isComplete() {
            return this.waiting >= 0 && this.acquired >= 0 && this.released >= 0;
        }
    }
}
