package io.github.distlock.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Child-JVM program for {@link EtcdClusterIntegrationTests}: prints {@code ready <pid>}, then
 * echoes every stdin line as {@code echo: <line>} until end-of-file, and prints
 * {@code shutting down} from a shutdown hook. It exits by itself after a minute so that it can
 * never outlive a broken test for long.
 */
final class EchoMain {

    private static final long MAX_LIFETIME_MILLIS = 60_000;

    private EchoMain() {
    }

    public static void main(String[] args) throws IOException {
        Thread lifetimeLimit = new Thread(() -> {
            try {
                Thread.sleep(MAX_LIFETIME_MILLIS);
                System.exit(3);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }, "lifetime-limit");
        lifetimeLimit.setDaemon(true);
        lifetimeLimit.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutting down")));
        System.out.println("ready " + ProcessHandle.current().pid());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            System.out.println("echo: " + line);
        }
    }

}
