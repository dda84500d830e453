package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;

/**
 * A lock store under a nemesis run: the servers the runner started for it, what the workers need
 * to open it, the store faults it can suffer, and a last look at what it still holds. The
 * {@link NemesisRunner} does the rest the same way for every store: workers, their faults (pauses,
 * kills, network faults through a proxy per worker), the register, the history and the checker.
 */
interface NemesisStore extends AutoCloseable {

    /** The stores a run can use, with what the runner must know before it starts one. */
    enum Type {

        /** A three-member etcd cluster. */
        ETCD(EtcdNemesisStore.ELECTION),
        /** A Redis primary with a replica, watched by Sentinel. */
        REDIS(RedisNemesisStore.ELECTION),
        /** A three-member ZooKeeper ensemble. */
        ZOOKEEPER(ZookeeperNemesisStore.ELECTION),
        /** A single PostgreSQL server. */
        POSTGRES(JdbcNemesisStore.ELECTION),
        /** A single MariaDB server. */
        MARIADB(JdbcNemesisStore.ELECTION);

        private final Duration election;

        Type(Duration election) {
            this.election = election;
        }

        /** @return the name {@code --store} takes */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        /**
         * @return how long the store takes to serve again after a member's loss or heal (a leader
         * election, a failover, a restart): with the TTL, the recovery bound and the calm end
         */
        public Duration election() {
            return this.election;
        }

        /** @return the type named {@code label} */
        public static Type of(String label) {
            for (Type type : values()) {
                if (type.label().equals(label)) {
                    return type;
                }
            }
            throw new IllegalArgumentException("unknown store '" + label + "'; supported: "
                    + java.util.Arrays.stream(values()).map(Type::label).toList());
        }

        /** Starts the store's servers; they are stopped by {@link NemesisStore#close()}. */
        NemesisStore start() {
            return switch (this) {
                case ETCD -> EtcdNemesisStore.start();
                case POSTGRES, MARIADB -> JdbcNemesisStore.start(this);
                case ZOOKEEPER -> ZookeeperNemesisStore.start();
                case REDIS -> RedisNemesisStore.start();
            };
        }
    }

    /** @return the store's type */
    Type type();

    /** @return its members: 3 for a cluster, 1 for a single server (member faults then hit it) */
    int members();

    /**
     * @return the {@code host:port} of every server the workers connect to directly, in the order
     * {@link #spec(List)} takes them; the runner puts a proxy per worker in front of each. Empty if
     * the clients find the servers themselves (no network faults then).
     */
    List<String> addresses();

    /**
     * @param addresses {@link #addresses()}, or the proxies' addresses in their place
     * @return the {@code TestStore} spec a worker opens
     */
    String spec(List<String> addresses);

    /** @return the namespace of the workers' registries, in the store's form */
    String namespace();

    /**
     * @return how often to draw each store fault and network fault after the first round (the
     * worker faults are drawn by every store); an action not in the map is never drawn
     */
    Map<Action, Integer> weights();

    /**
     * @param fault a fault of the plan
     * @return how much longer than a TTL after its last renewal a session may stay alive in the store
     * because of that fault (a backward step of the clock the store expires sessions by), which the
     * calm end after the last heal must leave room for; zero for most faults
     */
    default Duration stretch(Fault fault) {
        return Duration.ZERO;
    }

    /** @return what the checker holds the run to with this lease TTL */
    Bounds bounds(Duration ttl);

    /**
     * Prepares a store fault: {@link Action#KILL_MEMBER}, {@link Action#PAUSE_MEMBER},
     * {@link Action#RESTART_EMPTY}, {@link Action#CLOCK_STEP} or {@link Action#DELETE_ENTRIES}.
     * The runner records its start, runs {@link StoreFault#start()}, waits its duration, runs
     * {@link StoreFault#heal()} (on another thread) and then records the heal.
     */
    StoreFault fault(Fault fault);

    /** @return the entries and sessions of the namespace left in the store, once the workers are gone */
    Observation observe();

    /** Stops every server it started, by PID. */
    @Override
    void close();

    /**
     * Deletes entries behind the library's back with {@code delete}, retried every 100 ms until the
     * store confirms one, for up to {@code timeout} (past any pause or restart of a server), so that
     * the fault window covers it. An attempt whose answer was lost either took effect before the
     * confirmed one or never did, so the confirmed retry closes the window.
     * @param store the store's name, for the message
     * @return what the confirmed attempt deleted
     * @throws IllegalStateException if no attempt was confirmed in time, or the thread was interrupted
     */
    static long untilConfirmed(String store, Duration timeout, Deletion delete) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception failure = null;
        while (System.nanoTime() - deadline < 0) {
            try {
                return delete.attempt();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while deleting entries from " + store, ex);
            }
            catch (Exception ex) {
                failure = ex;
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while deleting entries from " + store, interrupted);
                }
            }
        }
        throw new IllegalStateException(store + " confirmed no delete of entries within " + timeout
                + " (last failure: " + failure + "); one may have been applied after its fault window", failure);
    }

    /** One attempt to delete entries. */
    @FunctionalInterface
    interface Deletion {

        /** @return how many entries it deleted */
        long attempt() throws Exception;
    }

    /**
     * A store fault as the history names it.
     * @param kind its kind
     * @param target what it hits, for humans: a member, {@code leader m1}, a scope of entries
     * @param dataLoss whether the store can lose entries through it
     * @param start does it; runs on the runner's thread, so must not wait for long
     * @param heal undoes it; runs on a heal thread, may wait (a restart)
     */
    record StoreFault(FaultKind kind, String target, boolean dataLoss, Runnable start, Runnable heal) {
    }

    /**
     * What the store still held after the run.
     * @param entries lock entries of the namespace
     * @param sessions sessions (leases, session rows, ephemeral owners) of the workers
     * @param detail some of them, for humans
     */
    record Observation(int entries, int sessions, String detail) {
    }
}
