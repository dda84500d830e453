package io.github.distlock.sample.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;

import io.github.distlock.sample.demo.DemoEvent.Kind;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * One contending process of the demo ({@code demo.role=worker}), started by the
 * {@link DemoOrchestrator}. It takes a lock once to warm up, prints {@code READY}, then reads
 * commands from standard input:
 * {@code run fair} or {@code run unfair} starts {@code demo.workers} threads, {@code demo.worker-stagger}
 * apart, each of which prints {@code waiting}, takes the lock through {@link DemoWorker} (waiting
 * for it), and prints {@code acquired} and {@code released}; {@code run unfair with newcomer} also
 * starts, after the last of them, a newcomer (worker number {@code processes * workers + 1}) that
 * takes the unfair lock with {@code tryLock()}, retried until it succeeds. Once all are done it
 * prints {@code DONE}. It exits on {@code exit} or when standard input ends, so it never outlives
 * the orchestrator.
 */
@Component
@Profile("demo")
@ConditionalOnProperty(name = "demo.role", havingValue = "worker")
class DemoProcess implements CommandLineRunner {

    private final DemoWorker worker;

    private final DemoProperties properties;

    DemoProcess(DemoWorker worker, DemoProperties properties) {
        this.worker = worker;
        this.properties = properties;
    }

    @Override
    public void run(String... args) throws IOException {
        this.worker.warmUp("demo-warm-up-p" + this.properties.process());
        System.out.println("READY");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String command;
        while ((command = commands.readLine()) != null && !command.equals("exit")) {
            switch (command) {
                case "run fair" -> contend(true, false);
                case "run unfair" -> contend(false, false);
                case "run unfair with newcomer" -> contend(false, true);
                default -> System.out.println("FAILED unknown command: " + command);
            }
        }
    }

    private void contend(boolean fair, boolean newcomer) {
        String key = "demo-" + (fair ? "fair" : "unfair");
        int process = this.properties.process();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < this.properties.workers(); i++) {
            int number = (process - 1) * this.properties.workers() + i + 1;
            long delay = i * this.properties.workerStagger().toMillis();
            Thread thread = new Thread(() -> work(key, fair, number, delay), "worker-" + number);
            thread.start();
            threads.add(thread);
        }
        if (newcomer) {
            int number = this.properties.processes() * this.properties.workers() + 1;
            long delay = this.properties.workers() * this.properties.workerStagger().toMillis();
            Thread thread = new Thread(() -> arrive(key, number, delay), "newcomer-" + number);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            try {
                thread.join();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        System.out.println("DONE");
    }

    private void arrive(String key, int number, long delayMillis) {
        int process = this.properties.process();
        try {
            Thread.sleep(delayMillis);
            DemoWorker.print(new DemoEvent(LocalTime.now(), process, number, Kind.WAITING, 0));
            this.worker.holdWhenFree(key, process, number, this.properties.hold(), this.properties.waitTimeout());
        }
        catch (Exception ex) {
            System.out.println("FAILED worker " + number + ": " + ex);
        }
    }

    private void work(String key, boolean fair, int number, long delayMillis) {
        int process = this.properties.process();
        try {
            Thread.sleep(delayMillis);
            DemoWorker.print(new DemoEvent(LocalTime.now(), process, number, Kind.WAITING, 0));
            if (fair) {
                this.worker.holdFairly(key, process, number, this.properties.hold());
            }
            else {
                this.worker.holdUnfairly(key, process, number, this.properties.hold());
            }
        }
        catch (Exception ex) {
            System.out.println("FAILED worker " + number + ": " + ex);
        }
    }
}
