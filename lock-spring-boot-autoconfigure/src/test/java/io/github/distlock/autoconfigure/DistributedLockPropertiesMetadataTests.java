package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.distlock.LocalHandoff;
import io.github.distlock.aop.DistributedLockAdvisor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata that {@code spring-boot-configuration-processor} generates from
 * {@link DistributedLockProperties}: every property is described, and the contract properties
 * carry their documented defaults.
 */
class DistributedLockPropertiesMetadataTests {

    @Test
    void everyPropertyIsDescribed() throws IOException {
        Map<String, Map<String, Object>> properties = properties();
        assertThat(properties.keySet()).contains("distributed-lock.enabled", "distributed-lock.store",
                "distributed-lock.wait-timeout", "distributed-lock.aspect-order", "distributed-lock.owner-identity",
                "distributed-lock.etcd.endpoints", "distributed-lock.etcd.namespace", "distributed-lock.etcd.lease-ttl",
                "distributed-lock.etcd.connect-timeout", "distributed-lock.etcd.request-timeout",
                "distributed-lock.etcd.keep-alive-time", "distributed-lock.etcd.keep-alive-timeout",
                "distributed-lock.etcd.username", "distributed-lock.etcd.password",
                "distributed-lock.etcd.tls.ca-file", "distributed-lock.etcd.tls.cert-file",
                "distributed-lock.etcd.tls.key-file", "distributed-lock.etcd.tls.key-password",
                "distributed-lock.redis.namespace", "distributed-lock.redis.lease-ttl",
                "distributed-lock.redis.request-timeout", "distributed-lock.zookeeper.connect-string",
                "distributed-lock.zookeeper.namespace", "distributed-lock.zookeeper.session-timeout",
                "distributed-lock.zookeeper.connection-timeout", "distributed-lock.zookeeper.request-timeout",
                "distributed-lock.zookeeper.username", "distributed-lock.zookeeper.password",
                "distributed-lock.jdbc.table-prefix", "distributed-lock.jdbc.lease-ttl",
                "distributed-lock.jdbc.poll-interval", "distributed-lock.jdbc.request-timeout",
                "distributed-lock.jdbc.initialize-schema", "distributed-lock.aop.mode");
        properties.forEach((name, property) -> assertThat((String) property.get("description")).as(name)
            .isNotBlank()
            .doesNotStartWith("The ")
            .doesNotStartWith("A ")
            .endsWith("."));
    }

    @Test
    void contractPropertiesHaveTheirDefaults() throws IOException {
        Map<String, Map<String, Object>> properties = properties();
        assertThat(defaultOf(properties, "distributed-lock.enabled")).isEqualTo("true");
        // The registries' own default, stated as literals so that the metadata can show it.
        assertThat(DurationStyle.detectAndParse(defaultOf(properties, "distributed-lock.local-handoff.window")))
            .isEqualTo(LocalHandoff.DEFAULT.window());
        assertThat(DurationStyle.detectAndParse(defaultOf(properties, "distributed-lock.local-handoff.linger")))
            .isEqualTo(LocalHandoff.DEFAULT.linger());
        assertThat(defaultOf(properties, "distributed-lock.store")).isEqualTo("etcd");
        assertThat(defaultOf(properties, "distributed-lock.wait-timeout")).isEqualTo("30s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.endpoints")).isEqualTo("[http://127.0.0.1:2379]");
        assertThat(defaultOf(properties, "distributed-lock.etcd.namespace")).isEqualTo("/distributed-lock/");
        assertThat(defaultOf(properties, "distributed-lock.etcd.lease-ttl")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.connect-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.keep-alive-time")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.keep-alive-timeout")).isEqualTo("3s");
        assertThat(defaultOf(properties, "distributed-lock.redis.namespace")).isEqualTo("distributed-lock:");
        assertThat(defaultOf(properties, "distributed-lock.redis.lease-ttl")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.redis.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.zookeeper.connect-string")).isEqualTo("127.0.0.1:2181");
        assertThat(defaultOf(properties, "distributed-lock.zookeeper.namespace")).isEqualTo("/distributed-lock");
        assertThat(defaultOf(properties, "distributed-lock.zookeeper.session-timeout")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.zookeeper.connection-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.zookeeper.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.jdbc.table-prefix")).isEqualTo("DISTRIBUTED_LOCK_");
        assertThat(defaultOf(properties, "distributed-lock.jdbc.lease-ttl")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.jdbc.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.jdbc.initialize-schema")).isEqualTo("embedded");
        // No default: the registry's own, which depends on the database (1s on PostgreSQL, 50ms elsewhere).
        assertThat(properties.get("distributed-lock.jdbc.poll-interval")).doesNotContainKey("defaultValue");
        assertThat(defaultOf(properties, "distributed-lock.aspect-order"))
            .isEqualTo(Integer.toString(DistributedLockAdvisor.DEFAULT_ORDER));
        assertThat(defaultOf(properties, "distributed-lock.aop.mode")).isEqualTo("proxy");
    }

    @Test
    @SuppressWarnings("unchecked")
    void theHealthIndicatorSwitchIsDescribedWithItsDefault() throws IOException {
        Map<String, Object> property = ((List<Map<String, Object>>) metadata().get("properties")).stream()
            .filter((candidate) -> "management.health.distributed-lock.enabled".equals(candidate.get("name")))
            .findFirst()
            .orElseThrow(() -> new AssertionError("management.health.distributed-lock.enabled is not in the metadata"));
        assertThat(property.get("type")).isEqualTo("java.lang.Boolean");
        assertThat((String) property.get("description")).startsWith("Whether").endsWith(".");
        assertThat(String.valueOf(property.get("defaultValue"))).isEqualTo("true");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyStoreIsAHintOfTheStoreProperty() throws IOException {
        Map<String, Object> metadata = metadata();
        List<String> hinted = ((List<Map<String, Object>>) metadata.get("hints")).stream()
            .filter((hint) -> "distributed-lock.store".equals(hint.get("name")))
            .flatMap((hint) -> ((List<Map<String, Object>>) hint.get("values")).stream())
            .map((value) -> (String) value.get("value"))
            .toList();
        assertThat(hinted).containsExactlyInAnyOrder(Arrays.stream(DistributedLockProperties.Store.values())
            .map((store) -> store.name().toLowerCase(Locale.ROOT).replace('_', '-'))
            .toArray(String[]::new));
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAopModeIsADescribedHintOfTheModeProperty() throws IOException {
        Map<String, Object> metadata = metadata();
        List<Map<String, Object>> hinted = ((List<Map<String, Object>>) metadata.get("hints")).stream()
            .filter((hint) -> "distributed-lock.aop.mode".equals(hint.get("name")))
            .flatMap((hint) -> ((List<Map<String, Object>>) hint.get("values")).stream())
            .toList();
        assertThat(hinted).extracting((value) -> (String) value.get("value"))
            .containsExactlyInAnyOrder(Arrays.stream(DistributedLockProperties.Aop.Mode.values())
                .map((mode) -> mode.name().toLowerCase(Locale.ROOT))
                .toArray(String[]::new));
        assertThat(hinted).allSatisfy((value) -> assertThat((String) value.get("description")).isNotBlank());
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyInitializeSchemaModeIsADescribedHintOfItsProperty() throws IOException {
        Map<String, Object> metadata = metadata();
        List<Map<String, Object>> hinted = ((List<Map<String, Object>>) metadata.get("hints")).stream()
            .filter((hint) -> "distributed-lock.jdbc.initialize-schema".equals(hint.get("name")))
            .flatMap((hint) -> ((List<Map<String, Object>>) hint.get("values")).stream())
            .toList();
        assertThat(hinted).extracting((value) -> (String) value.get("value"))
            .containsExactlyInAnyOrder(Arrays.stream(DistributedLockProperties.Jdbc.InitializeSchema.values())
                .map((mode) -> mode.name().toLowerCase(Locale.ROOT))
                .toArray(String[]::new));
        assertThat(hinted).allSatisfy((value) -> assertThat((String) value.get("description")).isNotBlank());
    }

    /** The default as text: the basic JSON parser keeps numbers and booleans as strings. */
    private static String defaultOf(Map<String, Map<String, Object>> properties, String name) {
        assertThat(properties).containsKey(name);
        return String.valueOf(properties.get(name).get("defaultValue"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> properties() throws IOException {
        return ((List<Map<String, Object>>) metadata().get("properties")).stream()
            .filter((property) -> ((String) property.get("name")).startsWith("distributed-lock."))
            .collect(Collectors.toMap((property) -> (String) property.get("name"), (property) -> property));
    }

    private static Map<String, Object> metadata() throws IOException {
        try (InputStream input = DistributedLockPropertiesMetadataTests.class
            .getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(input).as("generated configuration metadata").isNotNull();
            // Without line breaks and indentation, which the basic parser would keep around list elements.
            String json = new String(input.readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\R\\s*", "");
            return JsonParserFactory.getJsonParser().parseMap(json);
        }
    }
}
