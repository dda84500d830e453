package io.github.distlock.sample.report;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.distlock.sample.SampleEtcd;
import io.github.distlock.sample.SampleInstances;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances schedule the sales report every second; each tick, exactly one of them runs it
 * and logs so, the other skips quietly.
 */
@ExtendWith({ SampleEtcd.class, OutputCaptureExtension.class })
class SalesReportJobIntegrationTests {

    private static final Pattern RUN = Pattern.compile("Sales report #(\\d+) ran on (instance-\\d)");

    private static final int TICKS = 5;

    @Test
    void eachTickRunsOnExactlyOneInstance(CapturedOutput output) {
        SampleInstances instances = SampleInstances.start(2, SampleEtcd.endpoints(),
                "spring.main.web-application-type=none", "sample.report.interval=1s");
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> runs(output).size() >= TICKS);
        }
        finally {
            instances.close();
        }
        List<Run> runs = runs(output);
        Map<Long, List<String>> instancesByTick = runs.stream()
            .collect(Collectors.groupingBy(Run::tick, Collectors.mapping(Run::instance, Collectors.toList())));
        assertThat(instancesByTick).as("instances that ran each tick").allSatisfy(
                (tick, ran) -> assertThat(ran).hasSize(1));
        long first = runs.get(0).tick();
        long last = runs.get(runs.size() - 1).tick();
        assertThat(instancesByTick).as("a run for every tick").hasSize((int) (last - first + 1));
    }

    private static List<Run> runs(CapturedOutput output) {
        Matcher matcher = RUN.matcher(output.getOut());
        return matcher.results().map(result -> new Run(Long.parseLong(result.group(1)), result.group(2))).toList();
    }

    private record Run(long tick, String instance) {
    }
}
