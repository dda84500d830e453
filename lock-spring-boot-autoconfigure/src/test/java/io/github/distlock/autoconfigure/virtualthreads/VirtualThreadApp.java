package io.github.distlock.autoconfigure.virtualthreads;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.testsupport.PinnedThreadRecording;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.EnableAsync;

/**
 * A Spring Boot application, run on JDK 21 or later by {@code VirtualThreadApplicationIntegrationTests}
 * with {@code spring.threads.virtual.enabled=true}, whose {@code @DistributedLock} methods are called
 * concurrently from virtual threads: through {@code @Async} methods of {@link AsyncCallers} (unfair and
 * fair) and through a method of {@link LockedWork} that is both {@code @Async} and locked (fair), all on
 * the task executor Spring Boot configures, while a {@link PinnedThreadRecording} records pinned carriers.
 *
 * <p>Properties besides the starter's: {@code vt.calls} (calls per round), {@code vt.keys} (call
 * {@code i} uses key {@code i % keys}, and the three ways by turns) and {@code vt.recording} (the
 * recording file). An unrecorded round of at most {@code 8 * keys} calls runs first (the first threads
 * through each code path initialize classes; a virtual thread that waits for that pins its carrier on
 * every JDK, once per class). Then the recording starts, the canary pins its carrier inside a locked
 * call ({@link LockedWork#pinCanary()}), and the recorded round runs. Pinning counts when the event's
 * stack passes through distlock's code (this application's own frames and the test support's aside),
 * so the canary's event, whose stack passes through the lock's interceptor, counts as
 * {@code canaryCounted}: the check can fail.
 *
 * <p>Prints {@code EXECUTOR <class of applicationTaskExecutor>}, the recording's {@code PINNED},
 * {@code TOLERATED} and {@code ELSEWHERE} lines, {@code ERROR <text>} for every call that failed,
 * {@code VIOLATION <key> <text>} for every broken guarantee, then {@code RESULT calls=<n> completed=<n>
 * acquired=<n> virtual=<n> unfair=<n> fair=<n> asyncFair=<n> concurrent=<n> violations=<n>} about the
 * recorded round followed by the recording's counts, and exits 0.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableAsync
@Import({ LockedWork.class, AsyncCallers.class })
public class VirtualThreadApp {

    private static final Duration ROUND_TIMEOUT = Duration.ofSeconds(120);

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(VirtualThreadApp.class)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            // spring-boot-docker-compose is on the test class path (for the etcd service connection), and this
            // JVM is no test, so Boot would otherwise look for a compose file to start.
            .properties("spring.docker.compose.enabled=false")
            .run(args);
        Environment environment = context.getEnvironment();
        int calls = environment.getRequiredProperty("vt.calls", Integer.class);
        int keys = environment.getRequiredProperty("vt.keys", Integer.class);
        Path recordingFile = Path.of(environment.getRequiredProperty("vt.recording"));
        LockedWork work = context.getBean(LockedWork.class);
        AsyncCallers callers = context.getBean(AsyncCallers.class);
        System.out.println("EXECUTOR " + context.getBean("applicationTaskExecutor").getClass().getName());

        Outcome warmUp = run(work, callers, Math.min(calls, 8 * keys), keys);
        PinnedThreadRecording recording = PinnedThreadRecording.start();
        List<String> canaryErrors = new ArrayList<>();
        try {
            callers.pinCanary().get(ROUND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            canaryErrors.add("canary " + ex);
        }
        Outcome outcome = run(work, callers, calls, keys);
        PinnedThreadRecording.Summary pinning = recording.stop(recordingFile, PinnedThreadRecording
            .throughDistlockCode(VirtualThreadApp.class.getPackageName() + ".", "io.github.distlock.testsupport."));

        canaryErrors.forEach((error) -> System.out.println("ERROR " + error));
        for (Outcome round : List.of(warmUp, outcome)) {
            round.errors.forEach((error) -> System.out.println("ERROR " + error));
            round.violations.forEach((violation) -> System.out.println("VIOLATION " + violation));
        }
        LockedWork.Round counts = outcome.round;
        int acquired = 0;
        for (int k = 0; k < keys; k++) {
            acquired += counts.acquired[k].get();
        }
        System.out.println("RESULT calls=" + calls + " completed=" + outcome.completed + " acquired=" + acquired
                + " virtual=" + counts.virtual.get() + " unfair=" + counts.unfair.get() + " fair=" + counts.fair.get()
                + " asyncFair=" + counts.asyncFair.get() + " concurrent=" + outcome.concurrent + " violations="
                + (warmUp.violations.size() + outcome.violations.size()) + " " + pinning.fields());
        System.out.flush();
        context.close();
        // jetcd's and gRPC's non-daemon threads may outlive the client briefly.
        System.exit(0);
    }

    /** Makes {@code calls} calls at once, by turns unfair and fair through the callers and async-and-locked. */
    private static Outcome run(LockedWork work, AsyncCallers callers, int calls, int keys) throws Exception {
        LockedWork.Round round = work.startRound(keys);
        int throughCallers = 0;
        for (int i = 0; i < calls; i++) {
            throughCallers += (way(i, keys) < 2) ? 1 : 0;
        }
        CountDownLatch started = new CountDownLatch(throughCallers);
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            int key = i % keys;
            futures.add(switch (way(i, keys)) {
                case 0 -> callers.call(key, false, started);
                case 1 -> callers.call(key, true, started);
                default -> {
                    CompletableFuture<Void> done = new CompletableFuture<>();
                    work.asyncFair(key, done);
                    yield done;
                }
            });
        }
        List<String> errors = new ArrayList<>();
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
                .exceptionally((ex) -> null)
                .get(ROUND_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        catch (TimeoutException ex) {
            errors.add("calls still running after " + ROUND_TIMEOUT.toSeconds() + " s");
        }
        int completed = 0;
        for (CompletableFuture<Void> future : futures) {
            if (future.isDone()) {
                try {
                    future.getNow(null);
                    completed++;
                }
                catch (CompletionException | CancellationException ex) {
                    errors.add("call " + ((ex.getCause() != null) ? ex.getCause() : ex));
                }
            }
        }
        List<String> violations = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            for (String violation : round.checkers[k].check(round.acquired[k].get()).violations()) {
                violations.add("vt-" + k + " " + violation);
            }
        }
        return new Outcome(round, completed, (int) (throughCallers - started.getCount()), errors, violations);
    }

    /** Call {@code i}: 0 unfair through a caller, 1 fair through a caller, 2 async-and-locked. */
    private static int way(int i, int keys) {
        return (i / keys) % 3;
    }

    private record Outcome(LockedWork.Round round, int completed, int concurrent, List<String> errors,
            List<String> violations) {
    }
}
