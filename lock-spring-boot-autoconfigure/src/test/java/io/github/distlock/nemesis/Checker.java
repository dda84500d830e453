package io.github.distlock.nemesis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import io.github.distlock.nemesis.History.Operation;
import io.github.distlock.nemesis.History.Window;
import io.github.distlock.nemesis.HistoryEvent.Call;
import io.github.distlock.nemesis.HistoryEvent.Failure;
import io.github.distlock.nemesis.HistoryEvent.LossReport;
import io.github.distlock.nemesis.HistoryEvent.RegisterWrite;
import io.github.distlock.nemesis.HistoryEvent.StoreObservation;
import io.github.distlock.nemesis.Violation.Kind;

/**
 * Checks a nemesis run's {@link History} against the lock's guarantees, one method per rule; each
 * returns the violations it found, with the keys, op ids, fences and times to find them.
 *
 * <p>What the rules share: a hold ends, as far as its holder goes, when its unlock began, at the
 * first loss report that covers it, or at its worker's kill ({@link History#holdEnd}); a killed
 * holder's entry may outlive it in the store until its lease ends, but it cannot write. A paused
 * worker is not dead: its lease can expire while it is stopped, and time it spent paused does not
 * count against bounds on what it must do ({@link History#deadline}); a worker whose network is
 * faulty may lose its lease the same way, but runs on. A bound that ends after the history
 * does, or after the worker was killed, is not judged: the history cannot show it was missed.
 */
public final class Checker {

    private final Bounds bounds;

    /** @param bounds what the rules allow, set per store by the runner */
    public Checker(Bounds bounds) {
        this.bounds = bounds;
    }

    /** @return every violation of every rule, by time */
    public List<Violation> check(History history) {
        List<Violation> violations = new ArrayList<>();
        violations.addAll(mutualExclusion(history));
        violations.addAll(fenceOrder(history));
        violations.addAll(silentLoss(history));
        violations.addAll(waitOverrun(history));
        violations.addAll(hangs(history));
        violations.addAll(fairOrder(history));
        violations.addAll(recovery(history));
        violations.addAll(ghosts(history));
        violations.sort(Comparator.comparingLong(Violation::at));
        return violations;
    }

    /**
     * G1, G12: two holds of a key overlap only if, while the older one (the lower fence) was asked
     * for or held, or the entry it was passed on with locally ({@link History#entrySince}), a fault
     * could end it behind its holder's back: one that can lose store data, a forward step of
     * the store's clock (which can expire its session before its next renewal,
     * {@link History#earlyExpiryDuring}; a backward step cannot), or a pause of the
     * older holder's worker or a network fault on its traffic, whose lease may expire meanwhile. Then that holder must be told, by a
     * loss report that covers its fence, within {@link Bounds#lossReport()} of its running time
     * after the overlap began ({@link Kind#LATE_LOSS_REPORT}). Reentrant holds are one hold.
     */
    public List<Violation> mutualExclusion(History history) {
        List<Violation> violations = new ArrayList<>();
        for (String key : history.keys()) {
            List<Operation> open = new ArrayList<>();
            for (Operation later : history.holds(key)) {
                long overlapAt = later.grant().at();
                open.removeIf((hold) -> history.holdEnd(hold) <= overlapAt);
                for (Operation earlier : open) {
                    // The store granted the lower fence first, even if a pause delayed its record.
                    boolean earlierIsOlder = earlier.grant().fence() <= later.grant().fence();
                    Operation older = earlierIsOlder ? earlier : later;
                    Operation newer = earlierIsOlder ? later : earlier;
                    String what = describe(history, older) + " and " + describe(history, newer) + " overlap from "
                            + history.time(overlapAt);
                    // From the older hold's entry, not its request: a local pass rides an entry a fault may have hit before.
                    long olderSince = history.entrySince(older);
                    boolean dataLoss = history.dataLossDuring(olderSince, overlapAt);
                    boolean earlyExpiry = history.earlyExpiryDuring(olderSince, overlapAt);
                    if (!dataLoss && !earlyExpiry && !history.cutOffDuring(older.worker(), olderSince, overlapAt)) {
                        violations.add(new Violation(Kind.MUTUAL_EXCLUSION, key, overlapAt,
                                what + ", with no data-loss fault, no forward clock step and no pause or network "
                                        + "fault of " + older.worker()));
                        continue;
                    }
                    String told = toldInTime(history, older, overlapAt);
                    if (told != null) {
                        violations.add(new Violation(Kind.LATE_LOSS_REPORT, key, overlapAt, what + " during "
                                + (dataLoss ? "a data-loss fault" : earlyExpiry ? "a forward clock step"
                                        : "a pause or network fault of " + older.worker()) + ", but " + told));
                    }
                }
                open.add(later);
            }
        }
        return violations;
    }

    /**
     * G3, G12: in grant order, a key's fence is above every earlier one while the store keeps its
     * data. A fault that can lose data starts the count over, unless {@link Bounds#fencesSurviveDataLoss()}.
     * A lower fence recorded after a higher one is excused if its worker was paused or cut off between the
     * request of its entry ({@link History#entrySince}: a local pass rides an older one) and its record (the store may have granted it first), provided that hold was then
     * reported lost: the higher fence could only be granted after its lease ended. The same holds
     * for a data-loss fault between its request and its record: the store granted the lower fence
     * first (or the entry it waited with was deleted as it was granted), and the higher one only once
     * the fault deleted the lower one's entry, so that hold was lost and must be reported so; and for
     * a forward step of the store's clock, which can expire the lower one's session as a deletion
     * would. A backward step of the clock excuses nothing: fences must not go back with it.
     */
    public List<Violation> fenceOrder(History history) {
        List<Violation> violations = new ArrayList<>();
        for (String key : history.keys()) {
            Operation highest = null;
            for (Operation hold : history.holds(key)) {
                long fence = hold.grant().fence();
                if (highest == null || fence > highest.grant().fence()) {
                    highest = hold;
                    continue;
                }
                long at = hold.grant().at();
                if (!this.bounds.fencesSurviveDataLoss() && history.dataLossDuring(highest.grant().at(), at)) {
                    highest = hold;
                    continue;
                }
                String what = describe(history, hold) + " after " + describe(history, highest);
                long since = history.entrySince(hold);
                boolean cutOff = history.cutOffDuring(hold.worker(), since, at);
                boolean dataLoss = history.dataLossDuring(since, at);
                boolean earlyExpiry = history.earlyExpiryDuring(since, at);
                if (fence < highest.grant().fence() && (cutOff || dataLoss || earlyExpiry)) {
                    String told = toldInTime(history, hold, at);
                    if (told != null) {
                        violations.add(new Violation(Kind.FENCE_ORDER, key, at, what + ": "
                                + (cutOff ? "its worker was paused or cut off" : dataLoss ? "a data-loss fault was on"
                                        : "the store's clock stepped forward")
                                + " before it recorded the grant, but " + told));
                    }
                    continue;
                }
                violations.add(new Violation(Kind.FENCE_ORDER, key, at, what + ", with no data-loss fault between"
                        + (history.clockStretchEnd() != Long.MIN_VALUE ? " (a backward step of the store's clock "
                                + "excuses no fence going back)" : "")));
            }
        }
        return violations;
    }

    /**
     * G5: a hold that the register refused (a write rejected below the fence it last accepted), or
     * whose unlock threw {@code LockLostException}, is covered by a loss report of its worker within
     * {@link Bounds#lossReport()} of its running time; the library reports lost holds also after
     * they were unlocked.
     */
    public List<Violation> silentLoss(History history) {
        List<Violation> violations = new ArrayList<>();
        for (RegisterWrite write : history.writes()) {
            if (!write.accepted()) {
                Optional<Operation> hold = history.operation(write.op());
                String who = hold.isPresent() ? describe(history, hold.get()) : write.op();
                String told = toldInTime(history, write.process(), write.key(), write.fence(), write.at());
                if (told != null) {
                    violations.add(new Violation(Kind.SILENT_LOSS, write.key(), write.at(), "at "
                            + history.time(write.at()) + " the register rejected the write of " + who
                            + " (it had accepted " + write.lastAccepted() + "), but " + told));
                }
            }
        }
        for (Operation op : history.operations()) {
            if (op.release() != null && op.release().lost()) {
                // From when the unlock threw: it learns of the loss from the store's answer to its release.
                String told = toldInTime(history, op, op.release().answeredAt());
                if (told != null) {
                    violations.add(new Violation(Kind.SILENT_LOSS, op.key(), op.release().answeredAt(), "unlock of "
                            + describe(history, op) + " threw LockLostException at "
                            + history.time(op.release().answeredAt())
                            + ", but " + told));
                }
            }
        }
        return violations;
    }

    /**
     * G10: a call with a timeout ({@code tryLock}, {@code tryLock(timeout)}, the annotation) answers
     * within its timeout plus {@link Bounds#waitOverrun()} of its worker's running time, with a grant
     * or a refusal. A call still unanswered at that deadline counts too, if the history goes on past it.
     */
    public List<Violation> waitOverrun(History history) {
        List<Violation> violations = new ArrayList<>();
        for (Operation op : history.operations()) {
            long timeout = op.request().timeoutMillis();
            if (timeout < 0) {
                continue;
            }
            long asked = op.request().at();
            long deadline = history.deadline(op.worker(), asked, millis(timeout) + this.bounds.waitOverrun().toNanos());
            long answered = op.outcomeAt();
            boolean judged = answered != History.NEVER || canJudge(history, op.worker(), deadline);
            if (answered > deadline && judged) {
                String answer = (answered == History.NEVER)
                        ? "had no answer by the end at " + history.time(history.end())
                        : "answered at " + history.time(answered) + ", " + seconds(answered - asked - millis(timeout))
                                + " past its timeout";
                violations.add(new Violation(Kind.WAIT_OVERRUN, op.key(), Math.min(answered, deadline),
                        describe(history, op) + " with a " + timeout + " ms timeout, asked at " + history.time(asked)
                                + ", " + answer + "; the bound is " + seconds(this.bounds.waitOverrun().toNanos())
                                + " past it"));
            }
        }
        return violations;
    }

    /**
     * Nothing hangs: every request of a worker that was not killed has a grant or a refusal by the
     * end, and every hold of one is released (the runner lets workers finish before it stops).
     */
    public List<Violation> hangs(History history) {
        List<Violation> violations = new ArrayList<>();
        for (Operation op : history.operations()) {
            if (history.killedAt(op.worker()) != History.NEVER) {
                continue;
            }
            if (op.outcomeAt() == History.NEVER) {
                violations.add(new Violation(Kind.HANG, op.key(), op.request().at(), describe(history, op)
                        + " asked at " + history.time(op.request().at()) + " and had no answer by the end at "
                        + history.time(history.end())));
            }
            else if (op.grant() != null && op.release() == null) {
                violations.add(new Violation(Kind.HANG, op.key(), op.grant().at(), describe(history, op)
                        + " was never released by the end at " + history.time(history.end())));
            }
        }
        return violations;
    }

    /**
     * G2: among fair waits ({@code lock}, {@code tryLock(timeout)} and the annotation on a fair
     * lock; {@code tryLock()} barges) that no fault window or kill overlaps, nor ended less than
     * {@link Bounds#election()} before they started (until the store serves again, a request may take
     * that long to reach it: a client reconnecting to a restarted database), one that started more
     * than {@link Bounds#fairnessSlack()} before another is not still waiting when the other is
     * granted: it was granted first, or its timeout ended first.
     */
    public List<Violation> fairOrder(History history) {
        long slack = this.bounds.fairnessSlack().toNanos();
        long settle = this.bounds.election().toNanos();
        List<Violation> violations = new ArrayList<>();
        for (String key : history.keys()) {
            List<Operation> waits = history.operations().stream()
                .filter((op) -> op.key().equals(key) && op.request().fair() && op.request().call() != Call.TRY_LOCK)
                .filter((op) -> !op.reentrant() && (op.grant() != null
                        || op.refusal() != null && op.refusal().failure() == Failure.TIMEOUT))
                .filter((op) -> !history.faultDuring(op.request().at() - settle, op.outcomeAt()))
                .sorted(Comparator.comparingLong((Operation op) -> op.request().at()))
                .toList();
            for (Operation later : waits) {
                if (later.grant() == null) {
                    continue;
                }
                long granted = later.grant().at();
                for (Operation earlier : waits) {
                    if (earlier.request().at() >= later.request().at() - slack) {
                        break;
                    }
                    if (earlier.outcomeAt() <= granted) {
                        continue;
                    }
                    String outcome;
                    if (earlier.grant() != null) {
                        outcome = "granted only at " + history.time(earlier.grant().at());
                    }
                    else {
                        long timedOut = earlier.request().at() + millis(earlier.request().timeoutMillis());
                        if (timedOut <= granted + slack) {
                            continue;
                        }
                        outcome = "its timeout ended at " + history.time(timedOut);
                    }
                    violations.add(new Violation(Kind.FAIR_ORDER, key, granted, describe(history, earlier)
                            + " waited from " + history.time(earlier.request().at()) + " but "
                            + describe(history, later) + ", waiting from " + history.time(later.request().at())
                            + ", was granted at " + history.time(granted) + "; the first was " + outcome));
                }
            }
        }
        return violations;
    }

    /**
     * G4, G11: after the last fault healed (or the last worker was killed), every key is granted
     * again within {@link Bounds#recovery()}. A fault that never healed fails the rule: the run
     * cannot show recovery, so the runner must heal every fault and keep contending long enough. A
     * backward step of the store's clock puts off the expiry of sessions renewed before it by its
     * size ({@link History#clockStretchEnd()}): recovery is then counted from the later of the last
     * heal and that step's effect plus its size, and from nothing else.
     */
    public List<Violation> recovery(History history) {
        List<Violation> violations = new ArrayList<>();
        long lastHeal = Long.MIN_VALUE;
        for (Window fault : history.faults()) {
            if (fault.heal() == History.NEVER) {
                violations.add(new Violation(Kind.NO_RECOVERY, null, fault.start(), "fault " + fault.id() + " ("
                        + fault.kind() + " of " + fault.target() + ") started at " + history.time(fault.start())
                        + " and never healed"));
            }
            lastHeal = Math.max(lastHeal, fault.heal());
        }
        if (lastHeal == Long.MIN_VALUE || lastHeal == History.NEVER) {
            return violations;
        }
        long stretchEnd = history.clockStretchEnd();
        String from = (stretchEnd > lastHeal) ? "the last backward clock step's effect plus its size at "
                + history.time(stretchEnd) : "the last heal at " + history.time(lastHeal);
        long by = Math.max(lastHeal, stretchEnd) + this.bounds.recovery().toNanos();
        for (String key : history.keys()) {
            long healAt = lastHeal;
            Optional<Operation> next = history.holds(key).stream().filter((op) -> op.grant().at() > healAt).findFirst();
            if (next.isEmpty() || next.get().grant().at() > by) {
                String then = next.map((op) -> "the next grant came at " + history.time(op.grant().at()))
                    .orElse((history.end() < by) ? "the history ends at " + history.time(history.end())
                            + ", too early to show it" : "it was never granted again");
                violations.add(new Violation(Kind.NO_RECOVERY, key, by, "not granted within "
                        + seconds(this.bounds.recovery().toNanos()) + " (TTL + election) after " + from + "; "
                        + then));
            }
        }
        return violations;
    }

    /**
     * G8, G7: after the workers exited, the runner's last look at the store found no entry and no
     * session of theirs. A run without that look fails: it cannot show there was nothing left.
     */
    public List<Violation> ghosts(History history) {
        List<StoreObservation> observations = history.observations();
        if (observations.isEmpty()) {
            return List.of(new Violation(Kind.GHOST, null, history.end(),
                    "no store observation after the workers exited"));
        }
        StoreObservation last = observations.get(observations.size() - 1);
        if (last.entries() == 0 && last.sessions() == 0) {
            return List.of();
        }
        return List.of(new Violation(Kind.GHOST, null, last.at(), "the store still had " + last.entries()
                + " entries and " + last.sessions() + " sessions at " + history.time(last.at()) + ": "
                + last.detail()));
    }

    /** @return null if {@code hold}'s worker reported it lost in time, or else what it did instead */
    private String toldInTime(History history, Operation hold, long from) {
        return toldInTime(history, hold.worker(), hold.key(), hold.grant().fence(), from);
    }

    private String toldInTime(History history, String worker, String key, long fence, long from) {
        long deadline = history.deadline(worker, from, this.bounds.lossReport().toNanos());
        Optional<LossReport> report = history.lossReport(worker, key, fence);
        if (report.isPresent() && report.get().at() <= deadline || !canJudge(history, worker, deadline)) {
            return null;
        }
        return worker + " reported no loss of fence " + fence + " by " + history.time(deadline)
                + report.map((loss) -> " (only at " + history.time(loss.at()) + ")").orElse("");
    }

    /** @return whether the history shows what {@code worker} did up to {@code deadline}: it ran on past it */
    private static boolean canJudge(History history, String worker, long deadline) {
        return deadline <= history.end() && deadline < history.killedAt(worker);
    }

    private static String describe(History history, Operation op) {
        String text = op.toString();
        if (op.grant() != null) {
            text += " fence " + op.grant().fence() + " granted at " + history.time(op.grant().at());
        }
        return text;
    }

    private static long millis(long millis) {
        return millis * 1_000_000L;
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.3fs", nanos / 1e9);
    }
}
