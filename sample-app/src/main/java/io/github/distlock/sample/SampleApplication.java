package io.github.distlock.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Sample application showing the distlock starter in use: an order service whose payments are
 * locked, fenced and idempotent ({@code orders}), a flash sale whose stock never oversells
 * ({@code sale}), a scheduled job that runs on one instance per tick ({@code report}), an endpoint
 * that holds any lock key for a while, to watch holders and waiters ({@code hold}), and, with
 * the {@code demo} profile, a command-line fairness experiment ({@code demo}). Everything is
 * configured in {@code application.yml}; all instances pointed at the same etcd (or, with
 * {@code distributed-lock.store=redis}, {@code zookeeper} or {@code jdbc}, the same Redis, ZooKeeper
 * or database) share locks and data.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
@EnableScheduling
public class SampleApplication {

    public static void main(String[] args) {
        ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class, args);
        if (context.getEnvironment().matchesProfiles("demo")) {
            // The demo is a command-line run: exit with its result once it is done.
            System.exit(SpringApplication.exit(context));
        }
    }
}
