package io.github.distlock.sample.observability;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.etcd.jetcd.Client;
import io.github.distlock.FencedLock;
import io.github.distlock.etcd.EtcdLockRegistry;

/**
 * Another instance, in a process of its own: takes a fair lock, prints {@code HOLDING <fence>},
 * and releases it when a line {@code release} arrives on stdin (or stdin closes).
 * Arguments: endpoint, namespace, owner identity, key.
 */
public final class LockHolderMain {

    private LockHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Client client = Client.builder().endpoints(args[0]).build();
                EtcdLockRegistry registry = EtcdLockRegistry.builder(client)
                    .namespace(args[1])
                    .leaseTtl(Duration.ofSeconds(10))
                    .ownerIdentity(args[2])
                    .build()) {
            FencedLock lock = registry.obtain(args[3], true);
            lock.lock();
            System.out.println("HOLDING " + lock.getFence());
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            do {
                line = stdin.readLine();
            }
            while (line != null && !line.equals("release"));
            lock.unlock();
            System.out.println("RELEASED");
        }
    }
}
