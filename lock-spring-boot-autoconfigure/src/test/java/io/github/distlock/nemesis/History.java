package io.github.distlock.nemesis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.github.distlock.core.Fences;
import io.github.distlock.nemesis.HistoryEvent.FaultHeal;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.HistoryEvent.FaultStart;
import io.github.distlock.nemesis.HistoryEvent.Grant;
import io.github.distlock.nemesis.HistoryEvent.LossReport;
import io.github.distlock.nemesis.HistoryEvent.Refusal;
import io.github.distlock.nemesis.HistoryEvent.RegisterWrite;
import io.github.distlock.nemesis.HistoryEvent.Release;
import io.github.distlock.nemesis.HistoryEvent.Request;
import io.github.distlock.nemesis.HistoryEvent.RunStart;
import io.github.distlock.nemesis.HistoryEvent.StoreObservation;
import io.github.distlock.nemesis.HistoryEvent.Unlocking;
import io.github.distlock.nemesis.HistoryEvent.WorkerKilled;
import io.github.distlock.nemesis.HistoryReader.Recording;

/**
 * A run's history, indexed for the {@link Checker}: every operation with its outcome, the fault
 * windows, the kills, the register writes, the loss reports and the store observations.
 *
 * <p>Built once from the merged events. A history that contradicts itself (an outcome of an
 * operation never requested, two outcomes of one request, a release without a grant, an op id or
 * fault id used twice, a heal of an unknown fault, an unlock of an op that holds nothing) is rejected with {@link IllegalArgumentException}:
 * that is a runner or worker defect, and a checker that guessed around it could hide a violation.
 */
public final class History {

    /** The kind of the zero-length fault window that a {@link WorkerKilled} event makes. */
    public static final String KILL_WORKER = "kill-worker";

    /** The kinds of fault that keep a worker from its store: a pause, and the network faults of its proxies. */
    static final Set<String> CUT_OFF = Stream
        .concat(Stream.of(FaultKind.PAUSE_WORKER), FaultKind.NETWORK.stream())
        .map(History::label)
        .collect(Collectors.toUnmodifiableSet());

    /** Time of a window that never healed, or of a hold that never ended. */
    public static final long NEVER = Long.MAX_VALUE;

    /**
     * How long a step of a store server's clock may take to reach every statement of the server
     * ({@code DatabaseServer.CLOCK_STEP_DELAY}, and generous scheduling on a loaded machine): a step
     * made at a fault's start (recorded before it is made) is in effect by then after the start; the
     * runner records the heal of a step once it waited {@code CLOCK_STEP_DELAY} after making the step
     * back, so the step back lies within this long before the heal unless that wait overran by more
     * than a second.
     */
    static final long CLOCK_STEP_EFFECT_NANOS = 1_500_000_000L;

    private static final Pattern CLOCK_STEP_TARGET = Pattern.compile(" clock ([+-]\\d+) s$");

    private final List<HistoryEvent> events;

    private final int tornLines;

    private final Map<String, Operation> operations = new LinkedHashMap<>();

    private final Map<String, List<Operation>> holds = new HashMap<>();

    /** The holds by worker, key and fence: see {@link #entrySince}. */
    private final Map<String, Operation> holdsByFence = new HashMap<>();

    private final List<Window> faults = new ArrayList<>();

    private final Map<String, Long> kills = new HashMap<>();

    private final Map<String, Long> unlocking = new HashMap<>();

    private final List<RegisterWrite> writes = new ArrayList<>();

    private final Map<String, List<LossReport>> lossesByProcess = new HashMap<>();

    private final List<LossReport> losses = new ArrayList<>();

    private final List<StoreObservation> observations = new ArrayList<>();

    private RunStart run;

    private History(List<HistoryEvent> events, int tornLines) {
        this.events = events.stream().sorted(Comparator.comparingLong(HistoryEvent::at)).toList();
        this.tornLines = tornLines;
        Map<String, FaultStart> openFaults = new HashMap<>();
        Set<String> faultIds = new HashSet<>();
        Map<String, Integer> holdCounts = new HashMap<>();
        for (HistoryEvent event : this.events) {
            if (event instanceof RunStart start) {
                this.run = start;
            }
            else if (event instanceof Request request) {
                Operation asked = new Operation(request, null, null, null, false);
                if (this.operations.putIfAbsent(request.op(), asked) != null) {
                    throw new IllegalArgumentException("op id used twice: " + request);
                }
            }
            else if (event instanceof Grant grant) {
                Operation op = pending(grant.op(), event);
                // A grant to a thread that holds the key already is a reentrant hold: same hold, same fence.
                int held = holdCounts.merge(holder(op), 1, Integer::sum);
                this.operations.put(grant.op(), new Operation(op.request(), grant, null, null, held > 1));
            }
            else if (event instanceof Refusal refusal) {
                Operation op = pending(refusal.op(), event);
                this.operations.put(refusal.op(), new Operation(op.request(), null, refusal, null, false));
            }
            else if (event instanceof Unlocking unlock) {
                Operation op = operation(unlock.op(), event);
                boolean twice = this.unlocking.putIfAbsent(unlock.op(), unlock.at()) != null;
                if (op.grant() == null || op.release() != null || twice) {
                    throw new IllegalArgumentException("unlock of an op that holds nothing: " + event);
                }
            }
            else if (event instanceof Release release) {
                Operation op = operation(release.op(), event);
                if (op.grant() == null || op.release() != null) {
                    throw new IllegalArgumentException("release of an op that holds nothing: " + event);
                }
                holdCounts.merge(holder(op), -1, Integer::sum);
                this.operations.put(release.op(),
                        new Operation(op.request(), op.grant(), null, release, op.reentrant()));
            }
            else if (event instanceof RegisterWrite write) {
                this.writes.add(write);
            }
            else if (event instanceof LossReport loss) {
                this.losses.add(loss);
                this.lossesByProcess.computeIfAbsent(loss.process(), (process) -> new ArrayList<>()).add(loss);
            }
            else if (event instanceof FaultStart fault) {
                if (!faultIds.add(fault.fault())) {
                    throw new IllegalArgumentException("fault id used twice: " + event);
                }
                openFaults.put(fault.fault(), fault);
            }
            else if (event instanceof FaultHeal heal) {
                FaultStart fault = openFaults.remove(heal.fault());
                if (fault == null) {
                    throw new IllegalArgumentException("heal of a fault that is not open: " + event);
                }
                this.faults.add(new Window(fault.fault(), label(fault.kind()), fault.target(), fault.dataLoss(),
                        fault.at(), heal.at()));
            }
            else if (event instanceof WorkerKilled killed) {
                this.kills.putIfAbsent(killed.worker(), killed.at());
                // A kill ends a pause of the worker: nothing is left to continue.
                openFaults.values().removeIf((fault) -> {
                    boolean pauseOfKilled = fault.kind() == FaultKind.PAUSE_WORKER
                            && fault.target().equals(killed.worker());
                    if (pauseOfKilled) {
                        this.faults.add(new Window(fault.fault(), label(fault.kind()), fault.target(), false,
                                fault.at(), killed.at()));
                    }
                    return pauseOfKilled;
                });
                this.faults.add(new Window("kill " + killed.worker(), KILL_WORKER, killed.worker(), false, killed.at(),
                        killed.at()));
            }
            else if (event instanceof StoreObservation observation) {
                this.observations.add(observation);
            }
        }
        openFaults.values().forEach((fault) -> this.faults.add(new Window(fault.fault(), label(fault.kind()),
                fault.target(), fault.dataLoss(), fault.at(), NEVER)));
        this.faults.sort(Comparator.comparingLong(Window::start));
        for (Operation op : this.operations.values()) {
            if (op.grant() != null && !op.reentrant()) {
                this.holds.computeIfAbsent(op.key(), (key) -> new ArrayList<>()).add(op);
                this.holdsByFence.put(holdOf(op.worker(), op.key(), op.grant().fence()), op);
            }
        }
        this.holds.values().forEach((holds) -> holds.sort(Comparator.comparingLong((Operation op) -> op.grant().at())));
    }

    /** @return the history of {@code events}, in any order */
    public static History of(List<HistoryEvent> events) {
        return new History(events, 0);
    }

    /** @return the history of what {@link HistoryReader} read */
    public static History of(Recording recording) {
        return new History(recording.events(), recording.tornLines());
    }

    /** @return the report's name for a fault kind, as {@code pause-worker} */
    public static String label(FaultKind kind) {
        return kind.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static String holdOf(String worker, String key, long fence) {
        return worker + '\u0000' + key + '\u0000' + fence;
    }

    /** @return who holds what, for counting reentrant holds: worker, thread and key */
    private static String holder(Operation op) {
        return op.worker() + '\u0000' + op.request().thread() + '\u0000' + op.key();
    }

    private Operation operation(String op, HistoryEvent event) {
        Operation operation = this.operations.get(op);
        if (operation == null) {
            throw new IllegalArgumentException("outcome of an op never requested: " + event);
        }
        return operation;
    }

    private Operation pending(String op, HistoryEvent event) {
        Operation operation = operation(op, event);
        if (operation.outcomeAt() != NEVER) {
            throw new IllegalArgumentException("second outcome of one request: " + event);
        }
        return operation;
    }

    /** @return every event, in time order */
    public List<HistoryEvent> events() {
        return this.events;
    }

    /** @return last lines the reader dropped because their process was killed while writing them */
    public int tornLines() {
        return this.tornLines;
    }

    /** @return the runner's start event, if it wrote one */
    public Optional<RunStart> run() {
        return Optional.ofNullable(this.run);
    }

    /** @return the time of the first event */
    public long start() {
        return this.events.isEmpty() ? 0 : this.events.get(0).at();
    }

    /** @return the time of the last event: what the checker knows nothing after */
    public long end() {
        return this.events.isEmpty() ? 0 : this.events.get(this.events.size() - 1).at();
    }

    /** @return {@code at} as seconds since the first event, for humans: {@code 12.345s} */
    public String time(long at) {
        return (at == NEVER) ? "never" : String.format(Locale.ROOT, "%.3fs", (at - start()) / 1e9);
    }

    /** @return every operation, in request order */
    public List<Operation> operations() {
        return List.copyOf(this.operations.values());
    }

    /** @return the operation with id {@code op}, if it was requested */
    public Optional<Operation> operation(String op) {
        return Optional.ofNullable(this.operations.get(op));
    }

    /** @return every key that was requested, sorted */
    public SortedSet<String> keys() {
        SortedSet<String> keys = new TreeSet<>();
        this.operations.values().forEach((op) -> keys.add(op.key()));
        return keys;
    }

    /** @return the granted, not reentrant operations of {@code key}, in grant order: the holds the rules judge */
    public List<Operation> holds(String key) {
        return Collections.unmodifiableList(this.holds.getOrDefault(key, List.of()));
    }

    /**
     * When the store entry that {@code hold} rode was asked for. A hold passed on inside its worker
     * (a local handoff: the same store fence, the next pass) rides the entry that the hold before it
     * got, and a fault may have struck that entry before this hold was even requested: the worker
     * learns of it through the store, perhaps later than another process that the store then
     * granted the key. So faults count from the request of the chain's first hold (pass 0, or the
     * first whose predecessor the history lacks).
     * @param hold a granted operation
     * @return that request's time
     */
    public long entrySince(Operation hold) {
        Operation first = hold;
        long fence = hold.grant().fence();
        while (Fences.pass(fence) > 0) {
            Operation passedFrom = this.holdsByFence.get(holdOf(hold.worker(), hold.key(), fence - 1));
            if (passedFrom == null) {
                break;
            }
            first = passedFrom;
            fence--;
        }
        return first.request().at();
    }

    /** @return fault windows and kills, by start time */
    public List<Window> faults() {
        return this.faults;
    }

    /** @return every register write, in time order */
    public List<RegisterWrite> writes() {
        return this.writes;
    }

    /** @return every loss report, in time order */
    public List<LossReport> losses() {
        return this.losses;
    }

    /** @return every store observation, in time order */
    public List<StoreObservation> observations() {
        return this.observations;
    }

    /** @return when {@code worker} was killed, or {@link #NEVER} */
    public long killedAt(String worker) {
        return this.kills.getOrDefault(worker, NEVER);
    }

    /** @return the first loss report of {@code process} that covers its hold of {@code key} with {@code fence} */
    public Optional<LossReport> lossReport(String process, String key, long fence) {
        return this.lossesByProcess.getOrDefault(process, List.of()).stream()
            .filter((loss) -> loss.covers(key, fence))
            .findFirst();
    }

    /**
     * When a hold stopped counting as its worker's: its unlock call began (recorded before the call,
     * so also for a worker killed in it), the first loss report that covers it, or its worker's
     * kill, whichever came first; {@link #NEVER} while none came. After a kill the store may keep
     * the entry until its lease ends, but the dead holder does nothing with it.
     */
    public long holdEnd(Operation hold) {
        long released = Math.min(hold.release() != null ? hold.release().at() : NEVER,
                this.unlocking.getOrDefault(hold.op(), NEVER));
        long end = Math.min(released, killedAt(hold.worker()));
        Optional<LossReport> loss = lossReport(hold.worker(), hold.key(), hold.grant().fence());
        return loss.isPresent() ? Math.min(end, loss.get().at()) : end;
    }

    /**
     * @param server the server whose clock steps
     * @param step how far it steps at the fault's start (negative: back); at the heal it steps back by as much
     * @return the target of a {@link FaultKind#CLOCK_STEP} fault, which the rules on clock steps read
     */
    static String clockStepTarget(String server, java.time.Duration step) {
        if (step.isZero() || step.toNanos() % 1_000_000_000L != 0) {
            throw new IllegalArgumentException("a clock step is a non-zero whole number of seconds, not " + step);
        }
        return server + " clock " + (step.isNegative() ? "-" : "+") + Math.abs(step.toSeconds()) + " s";
    }

    /** @return the step of a clock-step window in nanoseconds, from its target (see {@link #clockStepTarget}) */
    private static long clockStepNanos(Window window) {
        Matcher step = CLOCK_STEP_TARGET.matcher(window.target());
        if (!step.find()) {
            throw new IllegalArgumentException("a clock step's target names no step: " + window.target());
        }
        return Long.parseLong(step.group(1)) * 1_000_000_000L;
    }

    /**
     * The times when a store server's clock stepped forward: a clock-step fault's start if it steps
     * forward, its heal if it stepped back (the heal steps forward again), each as the time from the
     * step's making to its effect in every server process ({@link #CLOCK_STEP_EFFECT_NANOS}).
     * @param forward forward steps, or backward ones
     * @return {from, to, step size in nanoseconds} per step
     */
    private List<long[]> clockSteps(boolean forward) {
        String kind = label(FaultKind.CLOCK_STEP);
        List<long[]> steps = new ArrayList<>();
        for (Window window : this.faults) {
            if (!window.kind().equals(kind)) {
                continue;
            }
            long step = clockStepNanos(window);
            if ((step > 0) == forward) {
                steps.add(new long[] { window.start(), window.start() + CLOCK_STEP_EFFECT_NANOS, Math.abs(step) });
            }
            else if (window.heal() != NEVER) {
                steps.add(new long[] { window.heal() - CLOCK_STEP_EFFECT_NANOS, window.heal(), Math.abs(step) });
            }
        }
        return steps;
    }

    /**
     * A forward step of the database's clock brings every session's expiry closer by its size: a
     * session may expire before its holder's next renewal, and another process then takes the key
     * while the holder still counts on it, as if the store had lost its entry.
     * @return whether such a step took effect at some time from {@code from} to {@code to}
     */
    public boolean earlyExpiryDuring(long from, long to) {
        return clockSteps(true).stream().anyMatch((step) -> step[0] <= to && step[1] >= from);
    }

    /**
     * A backward step of the database's clock puts off the expiry of every session renewed before it
     * took effect by its size: a dead holder's session blocks its keys that much longer than a TTL
     * after its last renewal. Nothing else: in particular it lowers no fence.
     * @return the latest time when such a step took effect plus its size, {@link Long#MIN_VALUE} if none
     */
    public long clockStretchEnd() {
        return clockSteps(false).stream().mapToLong((step) -> step[1] + step[2]).max().orElse(Long.MIN_VALUE);
    }

    /** @return whether a window that could lose store data was open at some time from {@code from} to {@code to} */
    public boolean dataLossDuring(long from, long to) {
        return this.faults.stream().anyMatch((window) -> window.dataLoss() && window.overlaps(from, to));
    }

    /**
     * @return whether {@code worker} was paused or cut off from the store (a network fault on its
     * traffic) at some time from {@code from} to {@code to}: either can end its session behind its back
     */
    public boolean cutOffDuring(String worker, long from, long to) {
        return this.faults.stream().anyMatch((window) -> CUT_OFF.contains(window.kind())
                && window.target().equals(worker) && window.overlaps(from, to));
    }

    /** @return whether any fault window or kill overlaps the time from {@code from} to {@code to} */
    public boolean faultDuring(long from, long to) {
        return this.faults.stream().anyMatch((window) -> window.overlaps(from, to));
    }

    /**
     * The time by which {@code worker} must have done something that takes {@code budget} of its
     * own running time from {@code from}: a paused JVM runs no code, so the time it spent paused in
     * between is added; {@link #NEVER} if it was still paused when the history ended.
     */
    public long deadline(String worker, long from, long budget) {
        long deadline = from + budget;
        for (Window pause : pauses(worker)) {
            if (pause.start() > deadline) {
                break;
            }
            if (pause.heal() > from) {
                if (pause.heal() == NEVER) {
                    return NEVER;
                }
                deadline += pause.heal() - Math.max(pause.start(), from);
            }
        }
        return deadline;
    }

    private List<Window> pauses(String worker) {
        String pause = label(FaultKind.PAUSE_WORKER);
        return this.faults.stream().filter((w) -> w.kind().equals(pause) && w.target().equals(worker)).toList();
    }

    /**
     * A lock request and what came of it.
     * @param grant the grant, or null
     * @param refusal the refusal, or null
     * @param release the release of the grant, or null
     * @param reentrant whether the grant went to a thread that already held the key
     */
    public record Operation(Request request, Grant grant, Refusal refusal, Release release, boolean reentrant) {

        /** @return the request's op id */
        public String op() {
            return this.request.op();
        }

        /** @return the requested key */
        public String key() {
            return this.request.key();
        }

        /** @return the process that asked */
        public String worker() {
            return this.request.process();
        }

        /** @return when the request got its grant or refusal, {@link #NEVER} if neither */
        public long outcomeAt() {
            return (this.grant != null) ? this.grant.at() : (this.refusal != null) ? this.refusal.at() : NEVER;
        }

        @Override
        public String toString() {
            return this.request.op() + " (" + this.request.process() + "/" + this.request.thread() + " "
                    + this.request.call() + (this.request.fair() ? " fair" : "") + ")";
        }
    }

    /**
     * A time when a fault was in effect: from its start to its heal, or the instant of a kill.
     * @param kind {@link #label(FaultKind)} of the fault, or {@link #KILL_WORKER}
     * @param heal when it healed, {@link #NEVER} if it did not
     */
    public record Window(String id, String kind, String target, boolean dataLoss, long start, long heal) {

        /** @return whether this window and the time from {@code from} to {@code to} share an instant */
        public boolean overlaps(long from, long to) {
            return this.start <= to && this.heal >= from;
        }
    }
}
