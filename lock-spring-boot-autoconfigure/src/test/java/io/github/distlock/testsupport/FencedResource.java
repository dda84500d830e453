package io.github.distlock.testsupport;

/**
 * A resource that accepts a write only if its fence is greater than every fence it accepted
 * before, so that a stale lock holder cannot overwrite newer data: what a fenced lock protects.
 */
public interface FencedResource {

    /**
     * Writes {@code data} if {@code fence} is greater than the highest fence accepted so far.
     * @param fence the writer's fence
     * @param data what to write
     * @return whether the write was accepted
     */
    boolean write(long fence, String data);

    /** @return the highest fence accepted so far, 0 if none */
    long storedFence();

    /** @return the data of the last accepted write, or {@code null} */
    String data();
}
