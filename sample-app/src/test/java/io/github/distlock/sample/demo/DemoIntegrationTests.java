package io.github.distlock.sample.demo;

import io.github.distlock.sample.SampleApplication;
import io.github.distlock.sample.SampleEtcd;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo mode end to end, as {@code scripts/demo.sh} runs it but with shorter holds: the
 * orchestrator in this JVM, three worker JVMs started from the test class path, a real etcd. The
 * hold (600 ms) stays longer than the process stagger (300 ms), so that in the unfair run every
 * process has a worker queued before the newcomer releases the lock.
 */
@ExtendWith({ SampleEtcd.class, OutputCaptureExtension.class })
class DemoIntegrationTests {

    @Test
    @Timeout(120)
    void fairRunKeepsArrivalOrderAndUnfairRunServesWorkersOutOfArrivalOrder(CapturedOutput output) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class).run(
                "--spring.profiles.active=demo", "--distributed-lock.etcd.endpoints=" + SampleEtcd.endpoints(),
                "--demo.hold=600ms");
        int exitCode = SpringApplication.exit(context);

        assertThat(exitCode).as(output.getOut()).isZero();
        String out = output.getOut();
        assertThat(out).contains("=== fair=true ===", "=== fair=false ===");
        String fair = out.substring(out.indexOf("--- summary fair=true ---"), out.indexOf("=== fair=false ==="));
        assertThat(fair).contains("arrival order     : 1 2 3 4 5 6", "acquisition order : 1 2 3 4 5 6",
                "order kept        : yes, as fair=true promises", "mutual exclusion  : kept");
        // Process 1's workers 1 and 2, then its newcomer 7; processes 2 and 3 once 7 holds the lock.
        String unfair = out.substring(out.indexOf("--- summary fair=false ---"));
        assertThat(unfair).contains("arrival order     : 1 2 7 3 4 5 6", "order kept        : no, ",
                "served ahead      : worker ", "mutual exclusion  : kept", "what it shows     : worker 7 ");
        assertThat(out).containsPattern("\\d{2}:\\d{2}:\\d{2}\\.\\d{3} p1 worker 7 acquired \\(fence \\d+\\)")
            .containsPattern("\\d{2}:\\d{2}:\\d{2}\\.\\d{3} p3 worker 6 acquired \\(fence \\d+\\)")
            .doesNotContain("\u001b[");
    }
}
