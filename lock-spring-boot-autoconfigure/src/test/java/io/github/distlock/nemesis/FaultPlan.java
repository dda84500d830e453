package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The faults of a run, drawn up front from its seed, so that a seed always names the same
 * schedule for a store (what the processes do in between still depends on timing). Faults
 * overlap: a new one starts every 0.3 to 2.5 s and lasts up to a few lease TTLs. The first faults
 * go through every {@link Action} the store has once, in a seeded order, so that even a short run
 * injects each kind; after that each is drawn by weight. Two rules keep each fault meaningful: one
 * store fault other than a delete is on at a time (losing one member is what G11 promises to
 * survive), and a worker slot has one fault at a time (a pause is healed before the slot's worker
 * is killed, and a replacement gets some seconds to start). Every fault heals by {@code faultPhase}.
 *
 * @param faults by start time
 */
public record FaultPlan(List<Fault> faults) {

    /** How long a worker slot is left alone after its worker was killed, so that its replacement starts. */
    static final long REPLACEMENT_MILLIS = 4_000;

    /** How often the worker faults, which every store has, are drawn after the first round. */
    static final Map<Action, Integer> WORKER_WEIGHTS = Map.of(Action.PAUSE_WORKER, 25, Action.KILL_WORKER, 15);

    /** What the runner does to whom. */
    public enum Action {
        /** SIGSTOP a worker, SIGCONT at the heal. */
        PAUSE_WORKER,
        /** SIGKILL a worker and start a replacement with a new id; no heal. */
        KILL_WORKER,
        /**
         * Break the network between a worker slot and the store, through its proxies: black-hole
         * every byte, reset every connection, delay every byte, silently drop the open connections,
         * or hold the store's answers only ({@link Fault#variant()} modulo 5); forward again at the heal.
         */
        NETWORK_WORKER,
        /** SIGKILL a store member (or the leader), restart it on its data at the heal. */
        KILL_MEMBER,
        /** SIGSTOP a store member (or the leader), SIGCONT at the heal. */
        PAUSE_MEMBER,
        /** SIGSTOP a majority of a cluster's members, the one drawn and the next ones; SIGCONT at the heal. */
        LOSE_QUORUM,
        /** SIGKILL a store server (or the primary) and restart it without its data: the store loses entries. */
        RESTART_EMPTY,
        /** Step the clock of a store server that the store's protocol reads; step it back at the heal. */
        CLOCK_STEP,
        /** Delete entries of the run's namespace in the store; heals when the delete is done. */
        DELETE_ENTRIES;

        /** @return whether it hits a worker slot, not the store */
        boolean onWorker() {
            return this == PAUSE_WORKER || this == KILL_WORKER || this == NETWORK_WORKER;
        }

        /** @return whether it takes the store's one fault slot: every store fault but a delete */
        boolean onStoreMember() {
            return !onWorker() && this != DELETE_ENTRIES;
        }
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
     * @param variant a number from 0 to 999 that the action may use to vary (the network fault's
     * kind, a clock step's size)
     */
    public record Fault(long startMillis, Action action, int target, boolean leader, long durationMillis,
            int variant) {

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
     * @param storeWeights how often to draw each store and network fault (see {@link NemesisStore#weights()})
     */
    public static FaultPlan generate(long seed, Duration faultPhase, int workers, int members, Duration ttl,
            Map<Action, Integer> storeWeights) {
        Random random = new Random(seed);
        long phase = faultPhase.toMillis();
        long ttlMillis = ttl.toMillis();
        // In enum order, so that a seed draws the same plan whatever order the store's map iterates in.
        Map<Action, Integer> weights = new EnumMap<>(Action.class);
        weights.putAll(WORKER_WEIGHTS);
        storeWeights.forEach((action, weight) -> {
            if (action.onWorker() && action != Action.NETWORK_WORKER || weight < 0) {
                throw new IllegalArgumentException("a store cannot weigh " + action + " as " + weight);
            }
            weights.put(action, weight);
        });
        weights.values().removeIf((weight) -> weight == 0);
        List<Action> firsts = new ArrayList<>(weights.keySet());
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
            Action action = (n < firsts.size()) ? firsts.get(n) : weighted(random, weights);
            int variant = random.nextInt(1_000);
            long start = time;
            int target;
            boolean leader = false;
            long duration;
            switch (action) {
                case PAUSE_WORKER, KILL_WORKER, NETWORK_WORKER -> {
                    target = random.nextInt(workers);
                    // Shifted to the first free slot from the drawn one, so that the draw count stays fixed.
                    int free = -1;
                    for (int i = 0; i < workers && free < 0; i++) {
                        int slot = (target + i) % workers;
                        free = (slotFreeAt[slot] <= start) ? slot : -1;
                    }
                    duration = (action != Action.KILL_WORKER) ? 300 + random.nextInt((int) (2.5 * ttlMillis)) : 0;
                    if (free < 0) {
                        continue;
                    }
                    target = free;
                    duration = Math.min(duration, phase - start);
                    slotFreeAt[target] = start + ((action == Action.KILL_WORKER) ? REPLACEMENT_MILLIS : duration) + 200;
                }
                case KILL_MEMBER, PAUSE_MEMBER, LOSE_QUORUM, RESTART_EMPTY, CLOCK_STEP -> {
                    target = random.nextInt(members);
                    leader = random.nextInt(3) == 0;
                    duration = (action == Action.KILL_MEMBER || action == Action.RESTART_EMPTY)
                            ? 1_000 + random.nextInt(5_000) : 300 + random.nextInt((int) (1.5 * ttlMillis));
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
            faults.add(new Fault(start, action, target, leader, duration, variant));
        }
        faults.sort(Comparator.comparingLong(Fault::startMillis));
        return new FaultPlan(List.copyOf(faults));
    }

    private static Action weighted(Random random, Map<Action, Integer> weights) {
        int total = weights.values().stream().mapToInt(Integer::intValue).sum();
        int dice = random.nextInt(total);
        for (Map.Entry<Action, Integer> weight : weights.entrySet()) {
            dice -= weight.getValue();
            if (dice < 0) {
                return weight.getKey();
            }
        }
        throw new IllegalStateException("weights changed while drawing");
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (Fault fault : this.faults) {
            text.append(String.format(java.util.Locale.ROOT, "  %7.3fs %-15s %s%d for %.3fs (variant %d)%n",
                    fault.startMillis() / 1e3, fault.action(), fault.leader() ? "leader, else " : "", fault.target(),
                    fault.durationMillis() / 1e3, fault.variant()));
        }
        return text.toString();
    }
}
