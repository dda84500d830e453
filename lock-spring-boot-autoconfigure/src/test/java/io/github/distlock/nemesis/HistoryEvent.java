package io.github.distlock.nemesis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One event of a nemesis run, one line of a history file (see {@link HistoryLines}).
 *
 * <p>{@link #at()} is {@link System#nanoTime()} when the event happened: on Linux that is
 * CLOCK_MONOTONIC, one clock for every process of the host, so the events of all worker JVMs and
 * of the runner order by it. Take it when the event happens (before a call for a request, after
 * it returned for an outcome), not when the line is written. {@link #process()} names the process
 * that recorded the event: a worker id, unique per started JVM (a restarted worker gets a new
 * one), or the runner's. Operation ids are unique in the whole run (for example
 * {@code <worker>:<sequence>}).
 */
public sealed interface HistoryEvent {

    /** @return {@link System#nanoTime()} when it happened */
    long at();

    /** @return the process that recorded it */
    String process();

    /** @return the event's name in a history line */
    String type();

    /** @return the event's own fields, in line order, as they are written */
    Map<String, Object> fields();

    /** How a worker asked for a lock. */
    enum Call {
        /** {@code lock()}: waits without a timeout. */
        LOCK,
        /** {@code tryLock()}: one attempt, timeout 0, barges on a fair lock as on a fair {@code ReentrantLock}. */
        TRY_LOCK,
        /** {@code tryLock(timeout, unit)}. */
        TRY_LOCK_TIMEOUT,
        /** A method annotated with {@code @DistributedLock}, with its wait timeout. */
        ANNOTATION
    }

    /** Why a request ended without a grant. */
    enum Failure {
        /** {@code tryLock} returned false, or {@code LockAcquisitionException} because the wait timed out. */
        TIMEOUT,
        /** {@code LockAcquisitionException} because the store failed. */
        ERROR,
        /** The waiting thread was interrupted. */
        INTERRUPTED
    }

    /** What a fault does. A worker's kill is not a fault window but a {@link WorkerKilled} event. */
    enum FaultKind {
        /** SIGSTOP of a worker JVM until SIGCONT; its target is the worker id. */
        PAUSE_WORKER,
        /** A store member (or the single server) killed, then restarted. */
        KILL_MEMBER,
        /** A store member stopped with SIGSTOP, then continued. */
        PAUSE_MEMBER,
        /** A majority of a cluster's members stopped with SIGSTOP, then continued: no progress, no data lost. */
        LOSE_QUORUM,
        /** A proxy that drops every byte; the target of a proxy fault is the worker id whose traffic it carries. */
        BLACK_HOLE,
        /** A proxy that resets connections. */
        RESET,
        /** A proxy that delays traffic. */
        DELAY,
        /** A proxy that silently drops the bytes of the connections open at its start, and forwards new ones. */
        SEVER,
        /** A proxy that forwards the client's bytes but holds the server's answers: one direction cut. */
        ONE_WAY,
        /** Lock entries deleted behind the library's back. */
        DELETE_ENTRIES,
        /** The database's clock stepped. */
        CLOCK_STEP,
        /** A store server (or the primary) killed, then restarted without its data or from an older copy of it. */
        RESTART_EMPTY;

        /** The proxy faults, in the order a network fault's variant picks them (a seed names one schedule). */
        static final List<FaultKind> NETWORK = List.of(BLACK_HOLE, RESET, DELAY, SEVER, ONE_WAY);
    }

    /** Written once by the runner, first: what a human and the report need to reproduce the run. */
    record RunStart(long at, String process, long seed, String store, long epochMillis) implements HistoryEvent {

        @Override
        public String type() {
            return "run";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("seed", this.seed, "store", this.store, "epochMillis", this.epochMillis);
        }
    }

    /**
     * A worker thread is about to ask for a lock.
     * @param timeoutMillis the call's wait timeout, -1 for {@code lock()}, 0 for {@code tryLock()}
     */
    record Request(long at, String process, String thread, String op, String key, boolean fair, Call call,
            long timeoutMillis) implements HistoryEvent {

        @Override
        public String type() {
            return "request";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("thread", this.thread, "op", this.op, "key", this.key, "fair", this.fair, "call", this.call,
                    "timeoutMs", this.timeoutMillis);
        }
    }

    /** The request {@code op} got the lock, with {@code fence} from {@code getFence()} or {@code LockContext}. */
    record Grant(long at, String process, String op, long fence) implements HistoryEvent {

        @Override
        public String type() {
            return "grant";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("op", this.op, "fence", this.fence);
        }
    }

    /** The request {@code op} ended without the lock; {@code detail} is the exception's message, for humans. */
    record Refusal(long at, String process, String op, Failure failure, String detail) implements HistoryEvent {

        @Override
        public String type() {
            return "refusal";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("op", this.op, "failure", this.failure, "detail", this.detail);
        }
    }

    /**
     * The holder of {@code op} is about to call {@code unlock()}: from here on it does nothing under
     * the lock, and the store may hand the key on before the call returns. Written before the call,
     * so that a worker killed while it unlocks still shows where its hold ended.
     */
    record Unlocking(long at, String process, String op) implements HistoryEvent {

        @Override
        public String type() {
            return "unlocking";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("op", this.op);
        }
    }

    /**
     * The hold of {@code op} ended: {@code unlock()} returned, or it threw {@code LockLostException}:
     * {@code lost}; {@code at} is when the call began, as its {@link Unlocking}, and
     * {@code answeredAt} when it returned or threw (an unlock waits for the store to confirm, which
     * can take a request timeout when the client's server is lost meanwhile).
     */
    record Release(long at, String process, String op, boolean lost, long answeredAt) implements HistoryEvent {

        /** A release answered when it began. */
        Release(long at, String process, String op, boolean lost) {
            this(at, process, op, lost, at);
        }

        @Override
        public String type() {
            return "release";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("op", this.op, "lost", this.lost, "answered", this.answeredAt);
        }
    }

    /**
     * The hold of {@code op} wrote to the register of {@code key} with its fence; the register accepts
     * a write whose fence is at least {@code lastAccepted}, the highest fence it had accepted.
     */
    record RegisterWrite(long at, String process, String op, String key, long fence, boolean accepted,
            long lastAccepted) implements HistoryEvent {

        @Override
        public String type() {
            return "write";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("op", this.op, "key", this.key, "fence", this.fence, "accepted", this.accepted,
                    "lastAccepted", this.lastAccepted);
        }
    }

    /**
     * The library of {@code process} reported {@code count} holds of {@code key} lost, with fences
     * from {@code firstFence} to {@code lastFence} (one store entry and its local handoffs), also
     * when they were already unlocked.
     */
    record LossReport(long at, String process, String key, long firstFence, long lastFence, int count,
            String reason) implements HistoryEvent {

        /** @return whether this report covers the hold of {@code key} with {@code fence} */
        public boolean covers(String key, long fence) {
            return this.key.equals(key) && this.firstFence <= fence && fence <= this.lastFence;
        }

        @Override
        public String type() {
            return "loss";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("key", this.key, "firstFence", this.firstFence, "lastFence", this.lastFence,
                    "count", this.count, "reason", this.reason);
        }
    }

    /**
     * The runner started fault {@code fault} (an id unique in the run) on {@code target} (a worker
     * id for {@link FaultKind#PAUSE_WORKER}, a member or proxy name otherwise); {@code dataLoss} says
     * whether the store can lose entries through it (entries deleted, a restart without persistence,
     * a failover to a lagging replica, a clock step that expires leases).
     */
    record FaultStart(long at, String process, String fault, FaultKind kind, String target, boolean dataLoss)
            implements HistoryEvent {

        @Override
        public String type() {
            return "fault";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("fault", this.fault, "kind", this.kind, "target", this.target, "dataLoss", this.dataLoss);
        }
    }

    /** The runner healed fault {@code fault}: the store, proxy or worker is back as before. */
    record FaultHeal(long at, String process, String fault) implements HistoryEvent {

        @Override
        public String type() {
            return "heal";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("fault", this.fault);
        }
    }

    /** The runner sent SIGKILL to {@code worker}; written right after the signal. */
    record WorkerKilled(long at, String process, String worker) implements HistoryEvent {

        @Override
        public String type() {
            return "killed";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("worker", this.worker);
        }
    }

    /**
     * What the runner found in the store after every worker exited and the lease TTL passed: the
     * number of lock entries and sessions of the run's namespace left, and which, for humans.
     */
    record StoreObservation(long at, String process, int entries, int sessions, String detail)
            implements HistoryEvent {

        @Override
        public String type() {
            return "observed";
        }

        @Override
        public Map<String, Object> fields() {
            return ordered("entries", this.entries, "sessions", this.sessions, "detail", this.detail);
        }
    }

    private static Map<String, Object> ordered(Object... namesAndValues) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            fields.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return fields;
    }
}
