package io.github.distlock.sample.demo;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the fairness demo, under {@code demo} in {@code application.yml}.
 *
 * @param role {@code orchestrator} (starts the processes, prints the summary) or {@code worker}
 * (one of those processes)
 * @param process number of this worker process, from 1 (set by the orchestrator)
 * @param processes how many worker processes contend
 * @param workers how many workers (threads) each process runs
 * @param hold how long each worker holds the lock
 * @param processStagger delay between the start of one process's workers and the next process's
 * @param workerStagger delay between two workers of one process
 * @param waitTimeout how long a worker waits for the lock before giving up
 */
@ConfigurationProperties("demo")
public record DemoProperties(Role role, @DefaultValue("1") int process, int processes, int workers, Duration hold,
        Duration processStagger, Duration workerStagger, Duration waitTimeout) {

    /** What this process does in the demo. */
    public enum Role {

        ORCHESTRATOR, WORKER
    }
}
