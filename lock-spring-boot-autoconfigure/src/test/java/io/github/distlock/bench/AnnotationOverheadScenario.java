package io.github.distlock.bench;

import java.util.concurrent.TimeUnit;

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
 * Scenario 5: what {@code @DistributedLock} adds to a call, with the in-memory store so that no
 * etcd latency hides it. The same lock is taken once through the advised bean and once by hand
 * ({@code obtain}, {@code tryLock} with the default wait, call, {@code unlock}) around the same
 * method of the unadvised target; the difference per call is the aspect's overhead (key
 * evaluation, operation lookup, lock context). Batches of the two alternate.
 */
final class AnnotationOverheadScenario {

    private static final int WARMUP_BATCHES = 40;

    private static final int BATCHES = 60;

    private static final int CALLS_PER_BATCH = 20_000;

    private static final long WAIT_SECONDS = 30;

    private AnnotationOverheadScenario() {
    }

    static void run(ResultTable table) {
        System.out.println("[bench] scenario 5: @DistributedLock overhead, in-memory store");
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BenchApplication.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            // No compose file to start: spring-boot-docker-compose is on the test class path, and this is no test.
            .properties("distributed-lock.store=in-memory", "distributed-lock.wait-timeout=" + WAIT_SECONDS + "s",
                    "spring.docker.compose.enabled=false")
            .run()) {
            Orders advised = context.getBean(Orders.class);
            Orders target = new Orders();
            LockRegistry registry = context.getBean(LockRegistry.class);
            Samples annotated = new Samples();
            Samples direct = new Samples();
            for (int batch = 0; batch < WARMUP_BATCHES + BATCHES; batch++) {
                long annotatedNanos = batch(() -> advised.ship("order-42"));
                long directNanos = batch(() -> shipDirectly(registry, target, "order-42"));
                if (batch >= WARMUP_BATCHES) {
                    annotated.add(annotatedNanos);
                    direct.add(directNanos);
                }
            }
            double annotatedMicros = annotated.median() / 1e3 / CALLS_PER_BATCH;
            double directMicros = direct.median() / 1e3 / CALLS_PER_BATCH;
            double overhead = annotatedMicros - directMicros;
            table.add("5", "@DistributedLock call vs registry by hand (in-memory)",
                    ResultTable.number("%.2f us per call", annotatedMicros),
                    ResultTable.number("by hand %.2f us per call", directMicros),
                    ResultTable.number("+%.2f us", overhead), "overhead < 5 us", overhead < 5);
        }
    }

    private static long batch(Runnable call) {
        long start = System.nanoTime();
        for (int i = 0; i < CALLS_PER_BATCH; i++) {
            call.run();
        }
        return System.nanoTime() - start;
    }

    /** What the aspect does for {@code Orders.ship}, written out. */
    private static String shipDirectly(LockRegistry registry, Orders target, String orderId) {
        FencedLock lock = registry.obtain(orderId, false);
        try {
            if (!lock.tryLock(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("lock " + orderId + " not acquired");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        try {
            return target.ship(orderId);
        }
        finally {
            lock.unlock();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({ AopAutoConfiguration.class, DistributedLockAutoConfiguration.class })
    static class BenchApplication {

        @Bean
        Orders orders() {
            return new Orders();
        }
    }

    /** A locked method with a trivial body, so the lock and the aspect are all there is to measure. */
    static class Orders {

        private long shipped;

        @DistributedLock(key = "#orderId")
        public String ship(String orderId) {
            this.shipped++;
            return orderId;
        }
    }
}
