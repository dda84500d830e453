package io.github.distlock.testsupport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.distlock.FencedLock;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;

/**
 * A separate JVM that holds a lock and writes to a {@link FencedResource} with its fence, for the
 * fault tests. All commands run on the main thread, which is the thread that holds the lock.
 *
 * <p>Arguments: {@code <store spec> <namespace> <key> <lease ttl seconds> <resource name>}, the
 * store spec as {@link TestStore#open(String)} reads it.
 * Commands on stdin, one per line, each answered with one line:
 * <ul>
 * <li>{@code HOLD}: take the lock, answer {@code HOLDING <fence>};</li>
 * <li>{@code WRITE <data>}: write to the resource with the fence of the last {@code HOLD}, answer
 * {@code WRITE ACCEPTED <fence>} or {@code WRITE REJECTED <fence>};</li>
 * <li>{@code CHECK}: answer {@code LOCKED_BY_CURRENT_THREAD <true|false>};</li>
 * <li>{@code UNLOCK}: answer {@code UNLOCKED}, {@code LOCK_LOST <message>} or {@code UNLOCK_FAILED <exception>}.</li>
 * </ul>
 */
public final class FencedWriterMain {

    private FencedWriterMain() {
    }

    public static void main(String[] args) throws Exception {
        String namespace = args[1];
        String key = args[2];
        Duration ttl = Duration.ofSeconds(Long.parseLong(args[3]));
        String resourceName = args[4];
        TestStore store = TestStore.open(args[0]);
        LockRegistry registry = store.registry(namespace, ttl, "fenced-writer");
        Runtime.getRuntime().addShutdownHook(new Thread(store::close));
        FencedResource resource = store.resource(resourceName);
        FencedLock lock = registry.obtain(key, true);
        TestStore.warmUp(registry, key + "-warm-up");
        System.out.println("READY");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        long heldFence = 0;
        String command;
        while ((command = commands.readLine()) != null) {
            String[] words = command.trim().split(" ", 2);
            switch (words[0]) {
                case "HOLD" -> {
                    lock.lock();
                    heldFence = lock.getFence();
                    System.out.println("HOLDING " + heldFence);
                }
                case "WRITE" -> {
                    // The fence taken with the lock, as a worker that was paused mid-task would still use it.
                    long fence = heldFence;
                    boolean accepted = resource.write(fence, words[1]);
                    System.out.println("WRITE " + (accepted ? "ACCEPTED " : "REJECTED ") + fence);
                }
                case "CHECK" -> System.out.println("LOCKED_BY_CURRENT_THREAD " + lock.isLockedByCurrentThread());
                case "UNLOCK" -> {
                    try {
                        lock.unlock();
                        System.out.println("UNLOCKED");
                    }
                    catch (LockLostException ex) {
                        System.out.println("LOCK_LOST " + ex.getMessage().replace('\n', ' '));
                    }
                    catch (RuntimeException ex) {
                        System.out.println("UNLOCK_FAILED " + ex.toString().replace('\n', ' '));
                    }
                }
                default -> System.out.println("UNKNOWN " + command);
            }
        }
    }
}
