package io.github.distlock.core;

/**
 * How a lock's fence is made from its store's fence. A store fence (an etcd create revision, a
 * Redis counter, a ZooKeeper zxid, a database sequence) grows with every entry the store writes
 * for a key; a process may pass one entry's hold between its own threads without writing again
 * (a local handoff of an unfair lock). So the fence a thread sees is the store fence in the high
 * bits and the number of the local handoff in the low {@value #PASS_BITS} bits:
 * {@code fence = storeFence << 10 | pass}, where pass 0 is the thread that acquired the entry
 * from the store. Fences of a key therefore increase strictly across local handoffs, across
 * processes and across stores' own fences, and comparing two fences needs no decoding.
 */
public final class Fences {

    /** Low bits of a fence that number the local handoffs of one store entry. */
    public static final int PASS_BITS = 10;

    /** The most local handoffs one store entry gets before it goes back to the store. */
    public static final int MAX_PASS = (1 << PASS_BITS) - 1;

    /** Store fences above this would not fit: about 9e15, above any store's (Redis: microseconds until the year 2255). */
    private static final long MAX_STORE_FENCE = Long.MAX_VALUE >>> PASS_BITS;

    private Fences() {
    }

    /**
     * @param storeFence the fence the store gave the entry, non-negative
     * @param pass 0 for the acquisition from the store, then 1 to {@link #MAX_PASS} for each local handoff
     * @return the fence of that hold
     * @throws IllegalStateException if the store fence is out of range (a store defect, never a user's input)
     */
    public static long of(long storeFence, int pass) {
        if (storeFence < 0 || storeFence > MAX_STORE_FENCE) {
            throw new IllegalStateException("Store fence " + storeFence + " is outside 0.." + MAX_STORE_FENCE);
        }
        if (pass < 0 || pass > MAX_PASS) {
            throw new IllegalArgumentException("Local handoff number " + pass + " is outside 0.." + MAX_PASS);
        }
        return (storeFence << PASS_BITS) | pass;
    }

    /**
     * @param fence a lock's fence
     * @return the store fence in it: for etcd, the create revision of the holder's key
     */
    public static long storeFence(long fence) {
        return fence >>> PASS_BITS;
    }

    /**
     * @param fence a lock's fence
     * @return which local handoff of its store entry it is, 0 for the acquisition from the store
     */
    public static int pass(long fence) {
        return (int) (fence & MAX_PASS);
    }
}
