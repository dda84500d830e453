package io.github.distlock.integration;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.FencedResource;
import io.github.distlock.testsupport.TestStore;
import org.jspecify.annotations.Nullable;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * A separate JVM that runs Spring Integration's {@link LockRegistryLeaderInitiator} on a
 * {@link DistributedLockIntegrationRegistry}, for the leader election test.
 *
 * <p>Arguments: {@code <store spec> <namespace> <role> <lease ttl seconds> <name> <resource name>
 * <heartbeat millis> <busy-wait millis>}. Prints {@code READY <name>}, then one line per event, each
 * ending with {@link System#nanoTime()} (on Linux the monotonic clock, shared by every process of the
 * machine):
 * <ul>
 * <li>{@code GRANTED <name> <fence> <nanos>}: leadership granted, with the fence of the lock's hold;</li>
 * <li>{@code REVOKED <name> <nanos>}: leadership revoked;</li>
 * <li>{@code WRITE <ACCEPTED|REJECTED> <name> <fence> <stored fence> <nanos>}: the leader's work, a write
 * to a fenced resource every 100 ms with the fence it was granted, as long as it believes it leads;
 * refused once a higher fence was written.</li>
 * </ul>
 * The command {@code YIELD} on stdin makes the leader yield ({@code Context.yield()}): it unlocks and
 * competes again after the busy-wait interval; it prints {@code YIELDING <name> <whether it had a grant>}.
 */
public final class LeaderCandidateMain {

    private static final long WORK_INTERVAL_MILLIS = 100;

    private LeaderCandidateMain() {
    }

    public static void main(String[] args) throws Exception {
        String namespace = args[1];
        String role = args[2];
        Duration ttl = Duration.ofSeconds(Long.parseLong(args[3]));
        String name = args[4];
        String resourceName = args[5];
        long heartbeatMillis = Long.parseLong(args[6]);
        long busyWaitMillis = Long.parseLong(args[7]);
        TestStore store = TestStore.open(args[0]);
        LockRegistry registry = store.registry(namespace, ttl, name);
        FencedResource resource = store.resource(resourceName);
        DistributedLockIntegrationRegistry locks = new DistributedLockIntegrationRegistry(registry);
        Leadership candidate = new Leadership(name, role, locks);
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(locks, candidate);
        initiator.setHeartBeatMillis(heartbeatMillis);
        initiator.setBusyWaitMillis(busyWaitMillis);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            initiator.stop();
            store.close();
        }));
        Thread worker = new Thread(() -> work(name, candidate, resource), "leader-work");
        worker.setDaemon(true);
        worker.start();
        initiator.start();
        System.out.println("READY " + name);
        // Runs until the test kills it; stdin ends when the test JVM dies.
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String command;
        while ((command = commands.readLine()) != null) {
            if (command.trim().equals("YIELD")) {
                Context context = candidate.context;
                if (context != null) {
                    context.yield();
                }
                System.out.println("YIELDING " + name + " " + (context != null));
            }
            else {
                System.out.println("UNKNOWN " + command);
            }
        }
        System.exit(0);
    }

    private static void work(String name, Leadership candidate, FencedResource resource) {
        while (true) {
            long fence = candidate.fence;
            if (fence > 0) {
                // A resource that takes writes whose fence is at least the highest it has seen: the test
                // support's resource refuses an equal fence, so the leader's own fence already there counts.
                boolean written = resource.write(fence, name);
                long stored = resource.storedFence();
                boolean accepted = written || stored == fence;
                System.out.println("WRITE " + (accepted ? "ACCEPTED " : "REJECTED ") + name + " " + fence + " " + stored
                        + " " + System.nanoTime());
            }
            try {
                Thread.sleep(WORK_INTERVAL_MILLIS);
            }
            catch (InterruptedException ex) {
                return;
            }
        }
    }

    /** Records the fence of the hold that made it leader, for the work, and prints every event. */
    private static final class Leadership extends AbstractCandidate {

        private final String name;

        private final DistributedLockIntegrationRegistry locks;

        /** The fence of the current leadership, 0 while not leading. */
        volatile long fence;

        /** The context of the latest grant, to yield through. */
        volatile @Nullable Context context;

        Leadership(String name, String role, DistributedLockIntegrationRegistry locks) {
            super(name, role);
            this.name = name;
            this.locks = locks;
        }

        @Override
        public void onGranted(Context ctx) {
            // Called on the initiator's thread, which holds the lock.
            long granted = this.locks.obtain(getRole()).getFence();
            this.fence = granted;
            this.context = ctx;
            System.out.println("GRANTED " + this.name + " " + granted + " " + System.nanoTime());
        }

        @Override
        public void onRevoked(Context ctx) {
            this.fence = 0;
            System.out.println("REVOKED " + this.name + " " + System.nanoTime());
        }
    }
}
