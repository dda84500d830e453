package io.github.distlock.autoconfigure.contending;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.github.distlock.aop.LockLostEvent;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * A small Spring Boot application, started several times by
 * {@code ContendingApplicationIntegrationTests}, whose {@link Worker} methods contend for one
 * key. It takes commands on standard input, one per line, and answers on standard output:
 * <ul>
 * <li>{@code run N} and {@code fair N}: call the unfair or the fair locked method N times, on a
 * thread of their own, then print {@code DONE run} or {@code DONE fair};</li>
 * <li>{@code hold}: take the lock fairly, print {@code HOLDING <fence>}, and keep it until
 * {@code release}, then print {@code DONE hold};</li>
 * <li>{@code exit}: shut the application down.</li>
 * </ul>
 * Failures are printed as {@code FAILED <command> <exception>}; a critical section entered while
 * another process was inside is printed as {@code OVERLAP}, and every {@link LockLostEvent} as
 * {@code LOCK_LOST_EVENT <key> <fence>}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(Worker.class)
public class ContendingApp {

    public static void main(String[] args) throws IOException {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ContendingApp.class)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            // spring-boot-docker-compose is on the test class path (for the etcd service connection), and this
            // JVM is no test, so Boot would otherwise look for a compose file to start.
            .properties("spring.docker.compose.enabled=false")
            .run(args);
        Worker worker = context.getBean(Worker.class);
        ExecutorService executor = Executors.newCachedThreadPool();
        CountDownLatch release = new CountDownLatch(1);
        System.out.println("READY");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = commands.readLine()) != null && !line.equals("exit")) {
            String command = line.trim();
            String[] words = command.split(" ");
            switch (words[0]) {
                case "run" -> executor.execute(() -> repeat(command, Integer.parseInt(words[1]), worker::work));
                case "fair" -> executor.execute(() -> repeat(command, Integer.parseInt(words[1]), worker::workFairly));
                case "hold" -> executor.execute(() -> report(command, () -> {
                    worker.hold(release);
                    System.out.println("DONE hold");
                }));
                case "release" -> release.countDown();
                default -> System.out.println("FAILED " + command + " unknown command");
            }
        }
        executor.shutdownNow();
        context.close();
    }

    @Bean
    ApplicationListener<LockLostEvent> lockLostPrinter() {
        return (event) -> System.out.println("LOCK_LOST_EVENT " + event.getKey() + " " + event.getFence());
    }

    private static void repeat(String command, int times, Step step) {
        report(command, () -> {
            for (int i = 0; i < times; i++) {
                step.run();
            }
            System.out.println("DONE " + command.split(" ")[0]);
        });
    }

    private static void report(String command, Step step) {
        try {
            step.run();
        }
        catch (Exception ex) {
            System.out.println("FAILED " + command + " " + ex);
        }
    }

    @FunctionalInterface
    interface Step {

        void run() throws Exception;
    }
}
