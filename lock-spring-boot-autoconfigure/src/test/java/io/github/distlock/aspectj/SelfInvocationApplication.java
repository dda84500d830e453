package io.github.distlock.aspectj;

import io.github.distlock.LockContext;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * A Spring Boot application on the in-memory store whose {@link Orders} bean calls its own
 * {@code @DistributedLock} method, started by {@code AspectJModeTests} with
 * {@code distributed-lock.aop.mode} as its only argument, with or without the AspectJ agent. It
 * prints, one per line:
 * <ul>
 * <li>{@code BEFORE_CONTEXT <outcome>}: a woven locked method called before the context starts
 * (aspectj mode only): {@code ran} or the exception it threw;</li>
 * <li>{@code PROXIED <true|false>}: whether the bean is a Spring AOP proxy;</li>
 * <li>{@code SELF <held>}: whether the lock of {@code order:42} was held by the calling thread
 * inside the locked method, called by the bean on itself;</li>
 * <li>{@code EXTERNAL <held>}: the same, called through the bean reference;</li>
 * <li>{@code AFTER <locked>}: whether {@code order:42} is still locked after the calls.</li>
 * </ul>
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(SelfInvocationApplication.Orders.class)
public class SelfInvocationApplication {

    public static void main(String[] args) {
        String mode = args[0];
        if (mode.equals("aspectj")) {
            System.out.println("BEFORE_CONTEXT " + outcome(() -> new Orders(null).ship(42)));
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(SelfInvocationApplication.class)
            .bannerMode(Banner.Mode.OFF)
            .logStartupInfo(false)
            // spring-boot-docker-compose is on the test class path, and this JVM is no test.
            .properties("spring.docker.compose.enabled=false", "spring.main.web-application-type=none",
                    "distributed-lock.store=in-memory", "distributed-lock.aop.mode=" + mode)
            .run();
        Orders orders = context.getBean(Orders.class);
        LockRegistry registry = context.getBean(LockRegistry.class);
        System.out.println("PROXIED " + AopUtils.isAopProxy(orders));
        System.out.println("SELF " + orders.shipAll(42));
        System.out.println("EXTERNAL " + orders.ship(42));
        System.out.println("AFTER " + registry.obtain("order:42").isLocked());
        context.close();
    }

    private static String outcome(Runnable call) {
        try {
            call.run();
            return "ran";
        }
        catch (RuntimeException ex) {
            return ex.getClass().getSimpleName() + ": " + ex.getMessage();
        }
    }

    /** Locks an order while shipping it; {@link #shipAll} calls {@link #ship} on itself. */
    public static class Orders {

        private final LockRegistry registry;

        public Orders(LockRegistry registry) {
            this.registry = registry;
        }

        /**
         * Calls {@link #ship} on {@code this}, not through a proxy.
         * @return what {@link #ship} returned
         */
        public String shipAll(int orderId) {
            return ship(orderId);
        }

        /**
         * Ships an order under its lock.
         * @return whether the calling thread held {@code order:<orderId>} here, and its fence if
         * {@link LockContext} has one
         */
        @DistributedLock(key = "'order:' + #orderId", waitTimeout = "5s")
        public String ship(int orderId) {
            boolean held = this.registry.obtain("order:" + orderId).isLockedByCurrentThread();
            return held ? "held fence=" + LockContext.currentFence() : "not-held";
        }
    }
}
