package io.github.distlock.nemesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.distlock.nemesis.HistoryEvent.Call;
import io.github.distlock.nemesis.HistoryEvent.Failure;
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

/**
 * Writes histories for the checker's tests in milliseconds since the run's start, the way a
 * runner and its workers would record them. An op id is {@code <worker>:<n>}, and each op runs on
 * its own thread unless a test names one (to hold a key reentrantly).
 */
final class TestHistory {

    /** Where the run starts on the monotonic clock: any value, as {@code System.nanoTime()} has no origin. */
    static final long ORIGIN = 7_000_000_000_000L;

    private final List<HistoryEvent> events = new ArrayList<>();

    private final Map<String, Long> accepted = new HashMap<>();

    private final Map<String, String> keys = new HashMap<>();

    static long nanos(long millis) {
        return ORIGIN + millis * 1_000_000L;
    }

    static String worker(String op) {
        return op.substring(0, op.indexOf(':'));
    }

    TestHistory run(long seed, String store) {
        return add(new RunStart(nanos(0), "runner", seed, store, 1_700_000_000_000L));
    }

    TestHistory request(String op, String key, boolean fair, Call call, long timeoutMillis, long atMillis) {
        return request(op, op, key, fair, call, timeoutMillis, atMillis);
    }

    TestHistory request(String op, String thread, String key, boolean fair, Call call, long timeoutMillis,
            long atMillis) {
        this.keys.put(op, key);
        return add(new Request(nanos(atMillis), worker(op), thread, op, key, fair, call, timeoutMillis));
    }

    TestHistory grant(String op, long fence, long atMillis) {
        return add(new Grant(nanos(atMillis), worker(op), op, fence));
    }

    TestHistory refuse(String op, Failure failure, long atMillis) {
        return add(new Refusal(nanos(atMillis), worker(op), op, failure, failure + " of " + op));
    }

    TestHistory unlocking(String op, long atMillis) {
        return add(new Unlocking(nanos(atMillis), worker(op), op));
    }

    TestHistory release(String op, long atMillis) {
        return add(new Release(nanos(atMillis), worker(op), op, false));
    }

    TestHistory releaseLost(String op, long atMillis) {
        return add(new Release(nanos(atMillis), worker(op), op, true));
    }

    /** An unlock that began at {@code atMillis} and threw {@code LockLostException} at {@code answeredMillis}. */
    TestHistory releaseLost(String op, long atMillis, long answeredMillis) {
        return add(new Release(nanos(atMillis), worker(op), op, true, nanos(answeredMillis)));
    }

    /** A write of {@code op}'s hold, accepted if {@code fence} is at least the last fence the register accepted. */
    TestHistory write(String op, long fence, long atMillis) {
        String key = this.keys.get(op);
        long last = this.accepted.getOrDefault(key, 0L);
        boolean accepted = fence >= last;
        if (accepted) {
            this.accepted.put(key, fence);
        }
        return add(new RegisterWrite(nanos(atMillis), worker(op), op, key, fence, accepted, last));
    }

    /** An unfair {@code lock()} granted, written to the register once, and released. */
    TestHistory hold(String op, String key, long fence, long requestMillis, long grantMillis, long releaseMillis) {
        return request(op, key, false, Call.LOCK, -1, requestMillis).grant(op, fence, grantMillis)
            .write(op, fence, grantMillis + 1).release(op, releaseMillis);
    }

    TestHistory loss(String worker, String key, long firstFence, long lastFence, long atMillis) {
        return add(new LossReport(nanos(atMillis), worker, key, firstFence, lastFence, 1, "lease expired"));
    }

    /** A fault from {@code startMillis} to {@code healMillis}, or never healed if that is negative. */
    TestHistory fault(String id, FaultKind kind, String target, boolean dataLoss, long startMillis, long healMillis) {
        add(new FaultStart(nanos(startMillis), "runner", id, kind, target, dataLoss));
        return (healMillis < 0) ? this : add(new FaultHeal(nanos(healMillis), "runner", id));
    }

    TestHistory kill(String worker, long atMillis) {
        return add(new WorkerKilled(nanos(atMillis), "runner", worker));
    }

    TestHistory observe(int entries, int sessions, long atMillis) {
        return add(new StoreObservation(nanos(atMillis), "runner", entries, sessions,
                (entries == 0) ? "" : "/distributed-lock/a/00000001 of w4"));
    }

    TestHistory add(HistoryEvent event) {
        this.events.add(event);
        return this;
    }

    List<HistoryEvent> events() {
        return List.copyOf(this.events);
    }

    History build() {
        return History.of(this.events);
    }
}
