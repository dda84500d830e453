package io.github.distlock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Spring Boot application in its own JVM for scenario 10: the etcd store as the
 * auto-configuration sets it up, and a bean whose {@code @DistributedLock(fair = true)} method
 * holds one key for a given time.
 *
 * <p>Arguments: {@code <endpoints,comma-separated> <namespace> <name>}. Commands, one per line:
 * {@code CALLS <run> <annotated|registry> <threads> <hold ms> <window start> <window end> <stop at> <file>}:
 * {@code threads} threads call the locked method ({@code annotated}) or take the same fair lock
 * through the registry around the same work ({@code registry}) until {@code stop at}, and write
 * {@code <method started> <method returned> <call started>} per call inside the window to
 * {@code file}, then print {@code DONE <run> <count>}. The JVM exits when its stdin ends.
 */
public final class AppHandoffWorkerMain {

    static final String KEY = "app-handoff";

    private AppHandoffWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(WorkerApplication.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            .properties("distributed-lock.etcd.endpoints=" + args[0], "distributed-lock.etcd.namespace=" + args[1],
                    "distributed-lock.owner-identity=" + args[2], "distributed-lock.wait-timeout=60s",
                    "spring.docker.compose.enabled=false")
            .run()) {
            Section section = context.getBean(Section.class);
            LockRegistry registry = context.getBean(LockRegistry.class);
            System.out.println("READY " + args[2]);
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String command;
            while ((command = commands.readLine()) != null) {
                String[] words = command.trim().split(" ");
                if (!words[0].equals("CALLS") || words.length != 9) {
                    throw new IllegalArgumentException("unknown command: " + command);
                }
                boolean annotated = words[2].equals("annotated");
                int threads = Integer.parseInt(words[3]);
                long holdNanos = Long.parseLong(words[4]) * 1_000_000;
                long windowStart = Long.parseLong(words[5]);
                long windowEnd = Long.parseLong(words[6]);
                long stopAt = Long.parseLong(words[7]);
                List<Records> records = new ArrayList<>();
                List<Thread> callers = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    Records own = new Records(windowStart, windowEnd);
                    records.add(own);
                    Thread caller = new Thread(() -> {
                        while (System.nanoTime() < stopAt) {
                            long called = System.nanoTime();
                            long[] times = annotated ? section.hold(holdNanos) : holdThroughRegistry(registry, holdNanos);
                            own.add(called, times[0], times[1]);
                        }
                    }, "caller-" + i);
                    caller.start();
                    callers.add(caller);
                }
                for (Thread caller : callers) {
                    caller.join();
                }
                Records.writeAll(records, Path.of(words[8]));
                System.out.println("DONE " + words[1] + " " + records.stream().mapToInt(own -> own.count).sum());
            }
        }
    }

    /** What the aspect does around {@link Section#hold}, by hand. */
    private static long[] holdThroughRegistry(LockRegistry registry, long holdNanos) {
        FencedLock lock = registry.obtain(KEY, true);
        lock.lock();
        try {
            return Section.work(holdNanos);
        }
        finally {
            lock.unlock();
        }
    }

    /** The locked work: returns when it started and when it ended. */
    public static class Section {

        @DistributedLock(key = "'" + KEY + "'", fair = true)
        public long[] hold(long holdNanos) {
            return work(holdNanos);
        }

        static long[] work(long holdNanos) {
            long started = System.nanoTime();
            if (holdNanos > 0) {
                LockSupport.parkNanos(holdNanos);
            }
            return new long[] { started, System.nanoTime() };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ AopAutoConfiguration.class, DistributedLockAutoConfiguration.class })
    static class WorkerApplication {

        @Bean
        Section section() {
            return new Section();
        }
    }
}
