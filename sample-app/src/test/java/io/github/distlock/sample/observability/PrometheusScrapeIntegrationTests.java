package io.github.distlock.sample.observability;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleHttp.Reply;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /actuator/prometheus} after a payment ran under its order's {@code @DistributedLock}: the
 * lock meters appear in Prometheus's text format with their Prometheus names (dots become
 * underscores, counters end in {@code _total}, timers in {@code _seconds_count}, {@code _sum} and
 * {@code _max}) and their tags as labels.
 */
class PrometheusScrapeIntegrationTests extends AbstractSampleIntegrationTests {

    private static final String NAMESPACE = "/distributed-lock/";

    /** {@code name{label="value",...} value}; label values here contain no quotes or commas. */
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)$");

    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");

    @Test
    void lockMetersAreScrapedWithTheirNamesAndTags() {
        Reply paid = this.http.post("/orders/1001/pay");
        assertThat(paid.status()).as(paid.toString()).isEqualTo(200);

        Reply scrape = this.http.get("/actuator/prometheus");
        assertThat(scrape.status()).as(scrape.toString()).isEqualTo(200);
        assertThat(scrape.header("Content-Type")).startsWith("text/plain");
        List<Sample> samples = parse(scrape.body());
        List<String> lockLines = scrape.body().lines().filter(line -> line.contains("distributed_lock_")).toList();
        // Shown in the test output: the README's excerpt is taken from here.
        System.out.println(String.join(System.lineSeparator(), lockLines));

        // The annotation's meters (MicrometerLockMetrics), tagged outcome and fair.
        assertThat(value(samples, "distributed_lock_wait_seconds_count", "fair", "true", "outcome", "acquired"))
            .isGreaterThanOrEqualTo(1);
        assertThat(value(samples, "distributed_lock_wait_seconds_sum", "fair", "true", "outcome", "acquired"))
            .isPositive();
        assertThat(value(samples, "distributed_lock_wait_seconds_count", "fair", "false", "outcome", "timeout"))
            .isZero();
        assertThat(value(samples, "distributed_lock_held_seconds_count", "fair", "true", "outcome", "released"))
            .isGreaterThanOrEqualTo(1);
        // The payment takes 200 ms under the lock.
        assertThat(value(samples, "distributed_lock_held_seconds_max", "fair", "true", "outcome", "released"))
            .isGreaterThanOrEqualTo(0.2);
        assertThat(value(samples, "distributed_lock_held_seconds_count", "fair", "true", "outcome", "lost")).isZero();
        assertThat(value(samples, "distributed_lock_lost_total")).isZero();
        assertThat(value(samples, "distributed_lock_active")).isZero();

        // The registry's meters (LockRegistryMetrics), tagged namespace.
        assertThat(value(samples, "distributed_lock_acquisitions_total", "namespace", NAMESPACE, "outcome", "acquired"))
            .isGreaterThanOrEqualTo(1);
        assertThat(value(samples, "distributed_lock_acquisitions_total", "namespace", NAMESPACE, "outcome", "timeout"))
            .isZero();
        assertThat(value(samples, "distributed_lock_acquisitions_total", "namespace", NAMESPACE, "outcome", "failed"))
            .isZero();
        assertThat(value(samples, "distributed_lock_holds", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_waiting", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_holds_lost_total", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_kept_entries_lost_total", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_backend_errors_total", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_sessions_lost_total", "namespace", NAMESPACE)).isZero();
        assertThat(value(samples, "distributed_lock_session_alive", "namespace", NAMESPACE)).isEqualTo(1);
        // Keep-alives go out every TTL/3 (10 s / 3): a healthy session's renewal is younger than the TTL.
        assertThat(value(samples, "distributed_lock_session_renewal_age_seconds", "namespace", NAMESPACE))
            .isBetween(0.0, 10.0);

        assertThat(lockLines).as("metric types")
            .contains("# TYPE distributed_lock_wait_seconds summary", "# TYPE distributed_lock_lost_total counter",
                    "# TYPE distributed_lock_acquisitions_total counter",
                    "# TYPE distributed_lock_session_alive gauge");
    }

    /** The value of the one sample with that name and exactly those labels. */
    private static double value(List<Sample> samples, String name, String... labels) {
        Map<String, String> expected = new TreeMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            expected.put(labels[i], labels[i + 1]);
        }
        List<Sample> matching = samples.stream()
            .filter(sample -> sample.name().equals(name) && sample.labels().equals(expected))
            .toList();
        assertThat(matching).as("samples of %s%s; all of %s: %s", name, expected, name,
                samples.stream().filter(sample -> sample.name().equals(name)).toList())
            .hasSize(1);
        return matching.get(0).value();
    }

    private static List<Sample> parse(String exposition) {
        List<Sample> samples = new ArrayList<>();
        for (String line : exposition.lines().toList()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            assertThat(sample.matches()).as("a sample line: %s", line).isTrue();
            Map<String, String> labels = new TreeMap<>();
            if (sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            samples.add(new Sample(sample.group(1), labels, Double.parseDouble(sample.group(3))));
        }
        return samples;
    }

    private record Sample(String name, Map<String, String> labels, double value) {

        @Override
        public String toString() {
            return this.name + new LinkedHashMap<>(this.labels) + " " + this.value;
        }
    }
}
