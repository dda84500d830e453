package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * The faults of a run, drawn up front from its seed, so that a seed always names the same
 * schedule (what the processes do in between still depends on timing). Faults overlap: a new one
 * starts every 0.3 to 2.5 s and lasts up to a few lease TTLs. The first faults go through every
 * {@link Action} once, in a seeded order, so that even a short run injects each kind; after that
 * each is drawn by weight. Two rules keep each fault meaningful: one store member is down or
 * paused at a time (losing one member is what G11 promises to survive), and a worker slot has one
 * fault at a time (a pause is healed before the slot's worker is killed, and a replacement gets
 * some seconds to start). Every fault heals by {@code faultPhase}.
 *
 * @param faults by start time
 */
public record FaultPlan(List<Fault> faults) {

    /** How long a worker slot is left alone after its worker was killed, so that its replacement starts. */
    static final long REPLACEMENT_MILLIS = 4_000;

    /** What the runner does to whom. */
    public enum Action {
        /** SIGSTOP a worker, SIGCONT at the heal. */
        PAUSE_WORKER,
        /** SIGKILL a worker and start a replacement with a new id; no heal. */
        KILL_WORKER,
        /** SIGKILL a store member (or the leader), restart it on its data at the heal. */
        KILL_MEMBER,
        /** SIGSTOP a store member (or the leader), SIGCONT at the heal. */
        PAUSE_MEMBER,
        /** Delete entries of the run's namespace in the store; heals when the delete is done. */
        DELETE_ENTRIES
    }

    /**
     * One planned fault.
     * @param startMillis when it starts, after the workers are ready
     * @param action what it does
     * @param target a worker slot, a member index, or for {@link Action#DELETE_ENTRIES} what to
     * delete (0: every entry of the namespace, 1: every entry of the hot key, 2: the hot key's
     * oldest entry, its holder's)
     * @param leader for a member fault: hit whichever member leads when it starts instead of {@code target}
     * @param durationMillis from its start to its heal
     */
    public record Fault(long startMillis, Action action, int target, boolean leader, long durationMillis) {

        long endMillis() {
            return this.startMillis + this.durationMillis;
        }
    }

    /**
     * @param seed the run's seed
     * @param faultPhase faults start and heal within it
     * @param workers worker slots
     * @param members store members (1 for a single server: no member kept apart)
     * @param ttl the lease TTL, which pauses are sized against (some outlast it, most do not)
     */
    public static FaultPlan generate(long seed, Duration faultPhase, int workers, int members, Duration ttl) {
        Random random = new Random(seed);
        long phase = faultPhase.toMillis();
        long ttlMillis = ttl.toMillis();
        List<Action> firsts = new ArrayList<>(Arrays.asList(Action.values()));
        Collections.shuffle(firsts, random);
        long memberFreeAt = 0;
        long[] slotFreeAt = new long[workers];
        List<Fault> faults = new ArrayList<>();
        long time = 2_000;
        for (int n = 0;; n++) {
            time += 300 + random.nextInt(2_200);
            if (time >= phase) {
                break;
            }
            Action action = (n < firsts.size()) ? firsts.get(n) : weighted(random);
            long start = time;
            int target;
            boolean leader = false;
            long duration;
            switch (action) {
                case PAUSE_WORKER, KILL_WORKER -> {
                    target = random.nextInt(workers);
                    // Shifted to the first free slot from the drawn one, so that the draw count stays fixed.
                    int free = -1;
                    for (int i = 0; i < workers && free < 0; i++) {
                        int slot = (target + i) % workers;
                        free = (slotFreeAt[slot] <= start) ? slot : -1;
                    }
                    duration = (action == Action.PAUSE_WORKER) ? 300 + random.nextInt((int) (2.5 * ttlMillis)) : 0;
                    if (free < 0) {
                        continue;
                    }
                    target = free;
                    duration = Math.min(duration, phase - start);
                    slotFreeAt[target] = start + ((action == Action.KILL_WORKER) ? REPLACEMENT_MILLIS : duration) + 200;
                }
                case KILL_MEMBER, PAUSE_MEMBER -> {
                    target = random.nextInt(members);
                    leader = random.nextInt(3) == 0;
                    duration = (action == Action.KILL_MEMBER) ? 1_000 + random.nextInt(5_000)
                            : 300 + random.nextInt((int) (1.5 * ttlMillis));
                    start = Math.max(start, memberFreeAt);
                    if (start >= phase) {
                        continue;
                    }
                    duration = Math.min(duration, phase - start);
                    // A restart takes a few seconds more than planned: the next member fault waits for it at run time.
                    memberFreeAt = start + duration + 500;
                }
                default -> {
                    target = random.nextInt(3);
                    duration = 0;
                }
            }
            faults.add(new Fault(start, action, target, leader, duration));
        }
        faults.sort(Comparator.comparingLong(Fault::startMillis));
        return new FaultPlan(List.copyOf(faults));
    }

    private static Action weighted(Random random) {
        int dice = random.nextInt(100);
        if (dice < 25) {
            return Action.PAUSE_WORKER;
        }
        if (dice < 40) {
            return Action.KILL_WORKER;
        }
        if (dice < 60) {
            return Action.KILL_MEMBER;
        }
        if (dice < 80) {
            return Action.PAUSE_MEMBER;
        }
        return Action.DELETE_ENTRIES;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (Fault fault : this.faults) {
            text.append(String.format(java.util.Locale.ROOT, "  %7.3fs %-15s %s%d for %.3fs%n",
                    fault.startMillis() / 1e3, fault.action(), fault.leader() ? "leader, else " : "", fault.target(),
                    fault.durationMillis() / 1e3));
        }
        return text.toString();
    }
}
